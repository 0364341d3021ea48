// Starting, stopping and restarting the server, one operation at a time. The steps (read the
// settings, find and check the interpreter, start the client, tell the user) are passed in, so
// the sequencing is tested without VS Code.

import type { CheckResult, Interpreter, InterpreterProblem, Resolution } from './interpreter';
import { displayCommand, errorText } from './interpreter';
import type { ServerState } from './status';

export interface Stoppable {
  stop(): Promise<void>;
}

export interface ServerSteps<C extends Stoppable> {
  /** `graphmend.enable`. */
  isEnabled(): boolean;
  resolveInterpreter(): Promise<Resolution>;
  checkInterpreter(interpreter: Interpreter): Promise<CheckResult>;
  /** Creates and starts the client; rejects when the server cannot start. */
  startClient(interpreter: Interpreter): Promise<C>;
  /** The server cannot run: tell the user what to do. */
  reportProblem(problem: InterpreterProblem): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  setState(state: ServerState): void;
}

export class ServerController<C extends Stoppable> {
  private running: C | undefined;
  /** The chain of operations; each waits for the one before. */
  private queue: Promise<void> = Promise.resolve();
  /** A restart that is queued but not begun: more restart requests join it. */
  private queuedRestart: Promise<void> | undefined;

  constructor(private readonly steps: ServerSteps<C>) {}

  /** The running client, if any. */
  get client(): C | undefined {
    return this.running;
  }

  isCurrent(client: C): boolean {
    return this.running === client;
  }

  /**
   * Stops the server, then starts it again when `graphmend.enable` is true. Requests made while
   * one is waiting for its turn are served by that one (a burst of setting changes restarts once).
   */
  restart(reason: string): Promise<void> {
    if (this.queuedRestart) return this.queuedRestart;
    const run = this.enqueue(async () => {
      this.queuedRestart = undefined;
      await this.doRestart(reason);
    });
    this.queuedRestart = run;
    return run;
  }

  /** Stops the server (deactivation). */
  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    const run = this.queue.then(op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async doStop(): Promise<void> {
    const client = this.running;
    if (!client) return;
    this.running = undefined; // before stop(): its "stopped" event is then not taken for a crash
    try {
      await client.stop();
    } catch (err) {
      this.steps.log('warn', `stopping the server: ${errorText(err)}`);
    }
  }

  private async doRestart(reason: string): Promise<void> {
    const s = this.steps;
    await this.doStop();
    if (!s.isEnabled()) {
      s.log('info', `graphmend.enable is false: the server is not started (${reason})`);
      s.setState('disabled');
      return;
    }
    s.setState('starting');
    s.log('info', `starting the server (${reason})`);
    const resolution = await s.resolveInterpreter();
    if (!resolution.ok) {
      this.fail(resolution.problem);
      return;
    }
    const interpreter = resolution.interpreter;
    const from = interpreter.source === 'setting' ? 'graphmend.interpreter' : 'the Python extension';
    s.log('info', `interpreter from ${from}: ${displayCommand(interpreter)}`);
    const check = await s.checkInterpreter(interpreter);
    if (!check.ok) {
      this.fail(check.problem ?? { kind: 'importFailed', message: 'GraphMend: the interpreter check failed.' });
      return;
    }
    s.log('info', `Python ${check.pythonVersion?.join('.')}, graphmend ${check.graphmendVersion}`);
    try {
      this.running = await s.startClient(interpreter);
    } catch (err) {
      this.fail({
        kind: 'startFailed',
        source: interpreter.source,
        message: `GraphMend: the server did not start (${errorText(err)}). See the GraphMend log.`,
      });
      return;
    }
    s.setState('running');
  }

  private fail(problem: InterpreterProblem): void {
    this.steps.log('error', problem.message);
    if (problem.detail) this.steps.log('error', problem.detail);
    this.steps.setState('error');
    this.steps.reportProblem(problem);
  }
}

export const SELECT_INTERPRETER = 'Select Interpreter';
export const OPEN_SETTINGS = 'Open Settings';
export const RESTART_SERVER = 'Restart Server';
export const SHOW_LOG = 'Show Log';

/** Problems fixed outside VS Code (pip install, ...): a restart then picks up the fix. */
const FIXED_OUTSIDE: ReadonlySet<InterpreterProblem['kind']> = new Set(['noGraphmend', 'importFailed', 'timeout', 'startFailed']);

/** The buttons of the error message for a problem. */
export function problemActions(problem: InterpreterProblem, pythonExtensionInstalled: boolean): string[] {
  const actions: string[] = [];
  // Selecting an interpreter changes nothing while graphmend.interpreter is set.
  if (pythonExtensionInstalled && problem.source !== 'setting') actions.push(SELECT_INTERPRETER);
  actions.push(OPEN_SETTINGS);
  if (FIXED_OUTSIDE.has(problem.kind)) actions.push(RESTART_SERVER);
  actions.push(SHOW_LOG);
  return actions;
}
