import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { problemActions, ServerController, ServerSteps } from '../src/controller';
import type { CheckResult, Interpreter, InterpreterProblem, Resolution } from '../src/interpreter';
import type { ServerState } from '../src/status';

const PY: Interpreter = { command: '/venv/bin/python', args: [], source: 'pythonExtension' };

class FakeClient {
  stopped = false;
  constructor(
    readonly n: number,
    private readonly events: string[],
  ) {}
  async stop(): Promise<void> {
    this.events.push(`stop ${this.n}`);
    this.stopped = true;
  }
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Steps that record what happened; each field can be overridden. */
function fakeSteps(overrides: Partial<ServerSteps<FakeClient>> = {}) {
  const events: string[] = [];
  const states: ServerState[] = [];
  const problems: InterpreterProblem[] = [];
  let started = 0;
  const steps: ServerSteps<FakeClient> = {
    isEnabled: () => true,
    resolveInterpreter: async (): Promise<Resolution> => ({ ok: true, interpreter: PY }),
    checkInterpreter: async (): Promise<CheckResult> => ({ ok: true, pythonVersion: [3, 11], graphmendVersion: '0.1.0' }),
    startClient: async () => {
      started++;
      events.push(`start ${started}`);
      return new FakeClient(started, events);
    },
    reportProblem: (p) => problems.push(p),
    log: () => undefined,
    setState: (s) => states.push(s),
    ...overrides,
  };
  return { steps, events, states, problems };
}

describe('ServerController', () => {
  it('starts the server and reports it running', async () => {
    const { steps, events, states } = fakeSteps();
    const c = new ServerController(steps);
    await c.restart('test');
    assert.deepEqual(events, ['start 1']);
    assert.deepEqual(states, ['starting', 'running']);
    assert.equal(c.client?.n, 1);
  });

  it('stops the old server before starting the new one', async () => {
    const { steps, events } = fakeSteps();
    const c = new ServerController(steps);
    await c.restart('a');
    await c.restart('b');
    assert.deepEqual(events, ['start 1', 'stop 1', 'start 2']);
    assert.equal(c.client?.n, 2);
  });

  it('stops and does not start when graphmend.enable is false', async () => {
    let enabled = true;
    let resolved = 0;
    const { steps, events, states } = fakeSteps({
      isEnabled: () => enabled,
      resolveInterpreter: async () => {
        resolved++;
        return { ok: true, interpreter: PY };
      },
    });
    const c = new ServerController(steps);
    await c.restart('a');
    enabled = false;
    await c.restart('disabled');
    assert.deepEqual(events, ['start 1', 'stop 1']);
    assert.equal(resolved, 1, 'no interpreter lookup while disabled');
    assert.equal(states.at(-1), 'disabled');
    assert.equal(c.client, undefined);
  });

  it('reports an interpreter problem and does not start', async () => {
    const problem: InterpreterProblem = { kind: 'noInterpreter', message: 'GraphMend: no Python interpreter ...' };
    const { steps, events, states, problems } = fakeSteps({ resolveInterpreter: async () => ({ ok: false, problem }) });
    await new ServerController(steps).restart('a');
    assert.deepEqual(events, []);
    assert.deepEqual(problems, [problem]);
    assert.equal(states.at(-1), 'error');
  });

  it('reports a failed check and does not start', async () => {
    const problem: InterpreterProblem = { kind: 'noGraphmend', message: 'cannot import graphmend', source: 'setting' };
    const { steps, events, problems, states } = fakeSteps({ checkInterpreter: async () => ({ ok: false, problem }) });
    await new ServerController(steps).restart('a');
    assert.deepEqual(events, []);
    assert.deepEqual(problems, [problem]);
    assert.equal(states.at(-1), 'error');
  });

  it('reports a server that fails to start', async () => {
    const { steps, problems, states } = fakeSteps({
      startClient: async () => {
        throw new Error('Pending response rejected since connection got disposed');
      },
    });
    const c = new ServerController(steps);
    await c.restart('a');
    assert.equal(problems.length, 1);
    assert.equal(problems[0].kind, 'startFailed');
    assert.equal(problems[0].message, 'GraphMend: the server did not start (Pending response rejected since connection got disposed). See the GraphMend log.');
    assert.equal(states.at(-1), 'error');
    assert.equal(c.client, undefined);
  });

  it('serves a burst of restart requests with one restart', async () => {
    const { steps, events } = fakeSteps();
    const c = new ServerController(steps);
    await Promise.all([c.restart('a'), c.restart('b'), c.restart('c')]);
    assert.deepEqual(events, ['start 1']);
  });

  it('runs one operation at a time: requests during a start wait, then restart once', async () => {
    const gate = deferred();
    let n = 0;
    const { steps, events } = fakeSteps({
      startClient: async () => {
        n++;
        events.push(`begin ${n}`);
        const me = n;
        if (me === 1) await gate.promise;
        events.push(`end ${me}`);
        return new FakeClient(me, events);
      },
    });
    const c = new ServerController(steps);
    const first = c.restart('a');
    await new Promise((r) => setTimeout(r, 10)); // the first start is under way
    const second = c.restart('b');
    const third = c.restart('c');
    assert.equal(second, third, 'the queued restart is shared');
    gate.resolve();
    await Promise.all([first, second]);
    assert.deepEqual(events, ['begin 1', 'end 1', 'stop 1', 'begin 2', 'end 2']);
    assert.equal(c.client?.n, 2);
  });

  it('stop() stops the running server; a failing stop is logged, not thrown', async () => {
    const logs: string[] = [];
    const { steps } = fakeSteps({
      startClient: async () => ({
        n: 1,
        stopped: false,
        stop: async () => {
          throw new Error('Client is not running');
        },
      }) as unknown as FakeClient,
      log: (level, m) => logs.push(`${level} ${m}`),
    });
    const c = new ServerController(steps);
    await c.restart('a');
    await c.stop();
    assert.equal(c.client, undefined);
    assert.ok(logs.includes('warn stopping the server: Client is not running'), logs.join('\n'));
  });

  it('isCurrent is false for a client once it is being stopped', async () => {
    const { steps } = fakeSteps();
    const c = new ServerController(steps);
    await c.restart('a');
    const first = c.client!;
    assert.equal(c.isCurrent(first), true);
    await c.restart('b');
    assert.equal(c.isCurrent(first), false);
  });
});

describe('problemActions', () => {
  const problem = (kind: InterpreterProblem['kind'], source?: InterpreterProblem['source']): InterpreterProblem => ({ kind, message: '', source });

  it('offers "Select Interpreter" only when the Python extension is there and decides', () => {
    assert.deepEqual(problemActions(problem('noInterpreter', 'pythonExtension'), true), ['Select Interpreter', 'Open Settings', 'Show Log']);
    assert.deepEqual(problemActions(problem('noInterpreter'), false), ['Open Settings', 'Show Log']);
    assert.deepEqual(problemActions(problem('tooOld', 'setting'), true), ['Open Settings', 'Show Log']);
  });

  it('offers a restart for problems fixed outside VS Code (pip install ...)', () => {
    assert.deepEqual(problemActions(problem('noGraphmend', 'pythonExtension'), true), ['Select Interpreter', 'Open Settings', 'Restart Server', 'Show Log']);
    assert.deepEqual(problemActions(problem('importFailed', 'setting'), false), ['Open Settings', 'Restart Server', 'Show Log']);
    assert.deepEqual(problemActions(problem('notFound', 'setting'), false), ['Open Settings', 'Show Log']);
  });
});
