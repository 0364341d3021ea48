import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CHECK_SCRIPT,
  checkInterpreter,
  CheckRun,
  displayCommand,
  Interpreter,
  judgeCheck,
  parseCheckOutput,
  PythonEnvironment,
  resolveInterpreter,
} from '../src/interpreter';

const PY = '/x/python';
const fromSetting: Interpreter = { command: PY, args: [], source: 'setting' };

function run(partial: Partial<CheckRun>): CheckRun {
  return { timedOut: false, exitCode: 0, stdout: '', stderr: '', ...partial };
}

describe('resolveInterpreter', () => {
  it('uses graphmend.interpreter first, without asking the Python extension', async () => {
    let asked = 0;
    const r = await resolveInterpreter({
      setting: ['/venv/bin/python', '-X', 'utf8'],
      pythonExtension: async () => {
        asked++;
        return { path: '/other', executable: '/other/bin/python' };
      },
    });
    assert.deepEqual(r, { ok: true, interpreter: { command: '/venv/bin/python', args: ['-X', 'utf8'], source: 'setting' } });
    assert.equal(asked, 0);
  });

  it("uses the Python extension's active environment when the setting is empty", async () => {
    for (const setting of [[], ['  ']]) {
      const r = await resolveInterpreter({ setting, pythonExtension: async () => ({ path: '/env', executable: '/env/bin/python' }) });
      assert.deepEqual(r, { ok: true, interpreter: { command: '/env/bin/python', args: [], source: 'pythonExtension' } });
    }
  });

  it('says to install the Python extension or set the setting when there is neither', async () => {
    const r = await resolveInterpreter({ setting: [] });
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.problem.kind, 'noInterpreter');
    assert.equal(
      r.problem.message,
      'GraphMend: no Python interpreter to run the server. Install the Python extension and select an interpreter, or set `graphmend.interpreter` to a Python 3.10+ executable that has graphmend installed.',
    );
  });

  it('says to select an interpreter when the Python extension has none', async () => {
    const r = await resolveInterpreter({ setting: [], pythonExtension: async () => undefined });
    assert.ok(!r.ok);
    assert.equal(r.problem.kind, 'noInterpreter');
    assert.equal(r.problem.source, 'pythonExtension');
    assert.match(r.problem.message, /^GraphMend: no interpreter is selected in the Python extension\. Select one, or set `graphmend\.interpreter`/);
  });

  it('reports an environment without a Python executable', async () => {
    const env: PythonEnvironment = { path: '/conda/envs/empty', executable: undefined };
    const r = await resolveInterpreter({ setting: [], pythonExtension: async () => env });
    assert.ok(!r.ok);
    assert.equal(r.problem.kind, 'noExecutable');
    assert.match(r.problem.message, /\(\/conda\/envs\/empty\) has no Python executable/);
  });

  it('reports a failing Python extension instead of throwing', async () => {
    const r = await resolveInterpreter({
      setting: [],
      pythonExtension: async () => {
        throw new Error('activation failed');
      },
    });
    assert.ok(!r.ok);
    assert.equal(r.problem.kind, 'pythonExtensionFailed');
    assert.match(r.problem.message, /\(activation failed\)/);
  });
});

describe('parseCheckOutput', () => {
  it('reads the marked lines and ignores anything else printed', () => {
    assert.deepEqual(parseCheckOutput('hello from sitecustomize\ngraphmend-check python 3 11\r\ngraphmend-check graphmend 0.1.0\n'), {
      pythonVersion: [3, 11],
      graphmendVersion: '0.1.0',
    });
    assert.deepEqual(parseCheckOutput('graphmend-check python 3 12\n'), { pythonVersion: [3, 12] });
    assert.deepEqual(parseCheckOutput('3 11 0.1.0\n'), {});
    assert.deepEqual(parseCheckOutput(''), {});
  });
});

describe('judgeCheck', () => {
  it('accepts Python >= 3.10 that imports graphmend', () => {
    const r = judgeCheck(fromSetting, run({ stdout: 'graphmend-check python 3 10\ngraphmend-check graphmend 0.2.0rc1\n' }));
    assert.deepEqual(r, { ok: true, pythonVersion: [3, 10], graphmendVersion: '0.2.0rc1' });
  });

  it('says to pip install graphmend when it is missing', () => {
    const r = judgeCheck(
      fromSetting,
      run({ exitCode: 1, stdout: 'graphmend-check python 3 11\n', stderr: "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'graphmend'\n" }),
    );
    assert.equal(r.ok, false);
    assert.equal(r.problem?.kind, 'noGraphmend');
    assert.equal(r.problem?.message, 'GraphMend: the interpreter /x/python cannot import graphmend. Run `/x/python -m pip install graphmend` or set `graphmend.interpreter`.');
    assert.match(r.problem?.detail ?? '', /stderr: Traceback/);
  });

  it('puts the extra arguments into the pip command, quoted when needed', () => {
    const r = judgeCheck(
      { command: '/my envs/python', args: ['-X', 'utf8'], source: 'setting' },
      run({ exitCode: 1, stdout: 'graphmend-check python 3 11\n', stderr: "ModuleNotFoundError: No module named 'graphmend'" }),
    );
    assert.equal(r.problem?.message, 'GraphMend: the interpreter /my envs/python cannot import graphmend. Run `"/my envs/python" -X utf8 -m pip install graphmend` or set `graphmend.interpreter`.');
  });

  it('tells a broken graphmend (a dependency missing) from a missing one', () => {
    const r = judgeCheck(fromSetting, run({ exitCode: 1, stdout: 'graphmend-check python 3 11\n', stderr: "ModuleNotFoundError: No module named 'libcst'\n" }));
    assert.equal(r.problem?.kind, 'importFailed');
    assert.equal(
      r.problem?.message,
      "GraphMend: the interpreter /x/python failed to import graphmend (ModuleNotFoundError: No module named 'libcst'). Reinstall it with `/x/python -m pip install --force-reinstall graphmend`, or set `graphmend.interpreter` to a Python 3.10+ executable that has graphmend installed.",
    );
  });

  it('rejects Python older than 3.10, even when graphmend is missing too', () => {
    for (const [major, minor] of [[3, 9], [3, 6], [2, 7]]) {
      const r = judgeCheck(fromSetting, run({ exitCode: 1, stdout: `graphmend-check python ${major} ${minor}\n`, stderr: "ImportError: No module named graphmend\n" }));
      assert.equal(r.problem?.kind, 'tooOld', `${major}.${minor}`);
      assert.equal(
        r.problem?.message,
        `GraphMend: the interpreter /x/python is Python ${major}.${minor}; GraphMend needs Python 3.10 or newer. Select a newer interpreter, or set \`graphmend.interpreter\` to a Python 3.10+ executable that has graphmend installed.`,
      );
    }
    assert.equal(judgeCheck(fromSetting, run({ stdout: 'graphmend-check python 3 9\ngraphmend-check graphmend 0.1.0\n' })).problem?.kind, 'tooOld');
  });

  it('reports an executable that is not there or cannot run', () => {
    const missing = judgeCheck(fromSetting, run({ spawnError: 'ENOENT', exitCode: null }));
    assert.equal(missing.problem?.kind, 'notFound');
    assert.equal(missing.problem?.message, 'GraphMend: the interpreter /x/python was not found. Select an existing interpreter, or set `graphmend.interpreter` to a Python 3.10+ executable that has graphmend installed.');
    const denied = judgeCheck(fromSetting, run({ spawnError: 'EACCES', exitCode: null }));
    assert.equal(denied.problem?.kind, 'notRunnable');
    assert.match(denied.problem?.message ?? '', /^GraphMend: the interpreter \/x\/python could not be started \(EACCES\)\./);
  });

  it('reports a program that is not Python', () => {
    const r = judgeCheck(fromSetting, run({ exitCode: 2, stderr: 'node: bad option: -c\n' }));
    assert.equal(r.problem?.kind, 'notPython');
    assert.equal(r.problem?.message, 'GraphMend: /x/python did not answer like a Python interpreter (node: bad option: -c). Select a Python interpreter, or set `graphmend.interpreter` to a Python 3.10+ executable that has graphmend installed.');
    assert.match(judgeCheck(fromSetting, run({ exitCode: 3 })).problem?.message ?? '', /\(exit code 3\)/);
  });

  it('reports a timeout with the command to try by hand', () => {
    const r = judgeCheck(fromSetting, run({ timedOut: true, exitCode: null, stdout: 'graphmend-check python 3 11\n' }), 20_000);
    assert.equal(r.problem?.kind, 'timeout');
    assert.equal(r.problem?.message, 'GraphMend: the interpreter /x/python did not answer within 20 s (checking `import graphmend`). Check it in a terminal with `/x/python -c "import graphmend"`, or set `graphmend.interpreter` to a Python 3.10+ executable that has graphmend installed.');
  });

  it('keeps where the interpreter came from, for the buttons', () => {
    const r = judgeCheck({ command: PY, args: [], source: 'pythonExtension' }, run({ spawnError: 'ENOENT' }));
    assert.equal(r.problem?.source, 'pythonExtension');
  });
});

describe('displayCommand', () => {
  it('quotes what a shell would split or expand', () => {
    assert.equal(displayCommand({ command: '/usr/bin/python3', args: ['-X', 'utf8'] }), '/usr/bin/python3 -X utf8');
    assert.equal(displayCommand({ command: 'C:\\Program Files\\Python\\python.exe', args: [] }), '"C:\\Program Files\\Python\\python.exe"');
    assert.equal(displayCommand({ command: '/a/$HOME/py', args: [''] }), '"/a/\\$HOME/py" ""');
  });
});

/** Real processes: fake interpreters written as shell scripts, and the real python3 when present. */
describe('checkInterpreter (runs the check in a process)', () => {
  let dir: string;
  const script = (name: string, body: string, mode = 0o755) => {
    const file = path.join(dir, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, mode);
    return { command: file, args: [], source: 'setting' as const };
  };
  const python3 = (() => {
    try {
      const out = execFileSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 10))'], { encoding: 'utf8' });
      return out.trim() === 'True' ? 'python3' : undefined;
    } catch {
      return undefined;
    }
  })();

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'graphmend-check-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the check script after the extra arguments and parses what it prints', async () => {
    // Writes its arguments, one a line, so the test sees the command line.
    const argsFile = path.join(dir, 'args.txt');
    const fake = script('fake-ok', `printf '%s\\n' "$@" > '${argsFile}'; echo "graphmend-check python 3 12"; echo "graphmend-check graphmend 1.2.3"`);
    const r = await checkInterpreter({ ...fake, args: ['-X', 'utf8'] });
    assert.deepEqual(r, { ok: true, pythonVersion: [3, 12], graphmendVersion: '1.2.3' });
    assert.deepEqual(readFileSync(argsFile, 'utf8').split('\n').slice(0, -1), ['-X', 'utf8', '-c', CHECK_SCRIPT]);
  });

  it('reports a missing module', async () => {
    const fake = script('fake-missing', `echo "graphmend-check python 3 11"; echo "ModuleNotFoundError: No module named 'graphmend'" >&2; exit 1`);
    const r = await checkInterpreter(fake);
    assert.equal(r.problem?.kind, 'noGraphmend');
    assert.equal(r.problem?.message, `GraphMend: the interpreter ${fake.command} cannot import graphmend. Run \`${fake.command} -m pip install graphmend\` or set \`graphmend.interpreter\`.`);
  });

  it('kills an interpreter that hangs, after the timeout', async () => {
    const fake = script('fake-hang', 'echo "graphmend-check python 3 11"; exec sleep 30');
    const started = Date.now();
    const r = await checkInterpreter(fake, { timeoutMs: 300 });
    assert.equal(r.problem?.kind, 'timeout');
    assert.ok(Date.now() - started < 5000, 'returned soon after the timeout');
  });

  it('reports a path that does not exist', async () => {
    const r = await checkInterpreter({ command: path.join(dir, 'no-such-python'), args: [], source: 'setting' });
    assert.equal(r.problem?.kind, 'notFound');
  });

  it('reports a file that cannot be executed', async () => {
    const fake = script('not-executable', 'exit 0', 0o644);
    const r = await checkInterpreter(fake);
    assert.equal(r.problem?.kind, 'notRunnable');
    assert.match(r.problem?.message ?? '', /could not be started \(EACCES\)/);
  });

  it('reports a program that is not Python', async () => {
    const fake = script('not-python', 'echo "usage: tool [options]" >&2; exit 2');
    const r = await checkInterpreter(fake);
    assert.equal(r.problem?.kind, 'notPython');
    assert.match(r.problem?.message ?? '', /did not answer like a Python interpreter \(usage: tool \[options\]\)/);
  });

  it('with the real python3: finds a graphmend package and its version', { skip: !python3 && 'no python3 >= 3.10' }, async () => {
    const cwd = path.join(dir, 'with-graphmend');
    mkdirSync(path.join(cwd, 'graphmend'), { recursive: true });
    writeFileSync(path.join(cwd, 'graphmend', '__init__.py'), '__version__ = "9.8.7"\n');
    // -S: no site-packages, so only the package in cwd can be imported.
    const r = await checkInterpreter({ command: python3!, args: ['-S'], source: 'setting' }, { cwd });
    assert.equal(r.ok, true, r.problem?.message);
    assert.equal(r.graphmendVersion, '9.8.7');
    assert.ok(r.pythonVersion && r.pythonVersion[0] === 3 && r.pythonVersion[1] >= 10);
  });

  it('with the real python3: reports graphmend as not installed', { skip: !python3 && 'no python3 >= 3.10' }, async () => {
    const cwd = path.join(dir, 'empty');
    mkdirSync(cwd, { recursive: true });
    const r = await checkInterpreter({ command: python3!, args: ['-S'], source: 'setting' }, { cwd });
    assert.equal(r.problem?.kind, 'noGraphmend', r.problem?.detail);
    assert.equal(r.problem?.message, 'GraphMend: the interpreter python3 cannot import graphmend. Run `python3 -S -m pip install graphmend` or set `graphmend.interpreter`.');
  });

  it('with the real python3: reports a graphmend whose import fails', { skip: !python3 && 'no python3 >= 3.10' }, async () => {
    const cwd = path.join(dir, 'broken');
    mkdirSync(path.join(cwd, 'graphmend'), { recursive: true });
    writeFileSync(path.join(cwd, 'graphmend', '__init__.py'), 'import pygls_is_not_installed_here\n');
    const r = await checkInterpreter({ command: python3!, args: ['-S'], source: 'setting' }, { cwd });
    assert.equal(r.problem?.kind, 'importFailed', r.problem?.detail);
    assert.match(r.problem?.message ?? '', /failed to import graphmend \(ModuleNotFoundError: No module named 'pygls_is_not_installed_here'\)/);
  });

  it('with the real python3: a graphmend without __version__ is a failed import', { skip: !python3 && 'no python3 >= 3.10' }, async () => {
    const cwd = path.join(dir, 'noversion');
    mkdirSync(path.join(cwd, 'graphmend'), { recursive: true });
    writeFileSync(path.join(cwd, 'graphmend', '__init__.py'), '');
    const r = await checkInterpreter({ command: python3!, args: ['-S'], source: 'setting' }, { cwd });
    assert.equal(r.problem?.kind, 'importFailed');
    assert.match(r.problem?.message ?? '', /has no attribute '__version__'/);
  });
});
