// Which Python runs the server, and whether it can: resolution (the `graphmend.interpreter`
// setting, then the Python extension's active environment) and the check that the interpreter is
// Python >= 3.10 with graphmend importable. No vscode API here: the Python extension is reached
// through the function the caller passes in (see python.ts).

import { execFile } from 'node:child_process';

export const MIN_PYTHON: readonly [number, number] = [3, 10];
export const CHECK_TIMEOUT_MS = 20_000;

export interface Interpreter {
  /** The Python executable. */
  command: string;
  /** Extra arguments placed before `-m graphmend serve`. */
  args: string[];
  source: 'setting' | 'pythonExtension';
}

/** The active environment as the Python extension reports it. */
export interface PythonEnvironment {
  /** The environment's id or path, for messages. */
  path: string;
  /** Its Python executable; undefined when the environment has none (e.g. an empty conda env). */
  executable: string | undefined;
}

export interface InterpreterSources {
  /** `graphmend.interpreter`, variables already expanded. */
  setting: string[];
  /** Asks the Python extension for its active environment; undefined when it is not installed. */
  pythonExtension?: () => Promise<PythonEnvironment | undefined>;
}

export type ProblemKind =
  | 'noInterpreter'
  | 'noExecutable'
  | 'pythonExtensionFailed'
  | 'notFound'
  | 'notRunnable'
  | 'timeout'
  | 'notPython'
  | 'tooOld'
  | 'noGraphmend'
  | 'importFailed'
  | 'startFailed';

/** Why the server cannot start; `message` says what to do and is shown to the user as is. */
export interface InterpreterProblem {
  kind: ProblemKind;
  message: string;
  /** Where the interpreter came from, when there was one. */
  source?: Interpreter['source'];
  /** Output of the failed check, for the log. */
  detail?: string;
}

export type Resolution = { ok: true; interpreter: Interpreter } | { ok: false; problem: InterpreterProblem };

const SET_IT = 'set `graphmend.interpreter` to a Python 3.10+ executable that has graphmend installed';

/** `graphmend.interpreter` when set, else the Python extension's active environment, else a problem. */
export async function resolveInterpreter(sources: InterpreterSources): Promise<Resolution> {
  const [command, ...args] = sources.setting;
  if (command !== undefined && command.trim() !== '') {
    return { ok: true, interpreter: { command, args, source: 'setting' } };
  }
  if (!sources.pythonExtension) {
    return {
      ok: false,
      problem: {
        kind: 'noInterpreter',
        message: `GraphMend: no Python interpreter to run the server. Install the Python extension and select an interpreter, or ${SET_IT}.`,
      },
    };
  }
  let env: PythonEnvironment | undefined;
  try {
    env = await sources.pythonExtension();
  } catch (err) {
    return {
      ok: false,
      problem: {
        kind: 'pythonExtensionFailed',
        source: 'pythonExtension',
        message: `GraphMend: could not get the interpreter from the Python extension (${errorText(err)}). Select an interpreter, or ${SET_IT}.`,
      },
    };
  }
  if (!env) {
    return {
      ok: false,
      problem: {
        kind: 'noInterpreter',
        source: 'pythonExtension',
        message: `GraphMend: no interpreter is selected in the Python extension. Select one, or ${SET_IT}.`,
      },
    };
  }
  if (!env.executable) {
    return {
      ok: false,
      problem: {
        kind: 'noExecutable',
        source: 'pythonExtension',
        message: `GraphMend: the environment selected in the Python extension (${env.path}) has no Python executable. Select another interpreter, or ${SET_IT}.`,
      },
    };
  }
  return { ok: true, interpreter: { command: env.executable, args: [], source: 'pythonExtension' } };
}

/**
 * The check run as `<python> [args] -c CHECK_SCRIPT`. It prints the Python version before it
 * imports graphmend, so an old Python is reported as old even when graphmend is missing too, and
 * it is valid Python 2 so that a Python 2 is reported as too old rather than as "not Python".
 * Lines are marked so that anything else a site hook prints is ignored.
 */
export const CHECK_SCRIPT =
  'import sys; sys.stdout.write("graphmend-check python %d %d\\n" % tuple(sys.version_info[:2])); ' +
  'sys.stdout.flush(); import graphmend; ' +
  'sys.stdout.write("graphmend-check graphmend %s\\n" % graphmend.__version__)';

export interface CheckOutput {
  pythonVersion?: [number, number];
  graphmendVersion?: string;
}

export function parseCheckOutput(stdout: string): CheckOutput {
  const out: CheckOutput = {};
  for (const raw of stdout.split(/\r?\n/)) {
    const line = raw.trim();
    const py = /^graphmend-check python (\d+) (\d+)$/.exec(line);
    if (py) out.pythonVersion = [Number(py[1]), Number(py[2])];
    const gm = /^graphmend-check graphmend (\S+)$/.exec(line);
    if (gm) out.graphmendVersion = gm[1];
  }
  return out;
}

/** The command line as the user would type it (for messages). */
export function displayCommand(interpreter: Pick<Interpreter, 'command' | 'args'>): string {
  return [interpreter.command, ...interpreter.args]
    .map((a) => (a === '' || /[\s"'$`]/.test(a) ? `"${a.replace(/(["$`])/g, '\\$1')}"` : a))
    .join(' ');
}

export interface CheckResult {
  ok: boolean;
  pythonVersion?: [number, number];
  graphmendVersion?: string;
  problem?: InterpreterProblem;
}

/** What the check process did: the fields of execFile's callback that matter. */
export interface CheckRun {
  /** Set when the process could not be started (ENOENT, EACCES, ...). */
  spawnError?: string;
  timedOut: boolean;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
  return lines.length ? lines[lines.length - 1] : '';
}

/** Turns what the check process did into a verdict with a message that says what to do. */
export function judgeCheck(interpreter: Interpreter, run: CheckRun, timeoutMs = CHECK_TIMEOUT_MS): CheckResult {
  const cmd = displayCommand(interpreter);
  const parsed = parseCheckOutput(run.stdout);
  const detail = [run.stdout.trim() && `stdout: ${run.stdout.trim()}`, run.stderr.trim() && `stderr: ${run.stderr.trim()}`]
    .filter(Boolean)
    .join('\n');
  const fail = (kind: ProblemKind, message: string): CheckResult => ({
    ok: false,
    pythonVersion: parsed.pythonVersion,
    problem: { kind, message, source: interpreter.source, detail: detail || undefined },
  });

  if (run.spawnError !== undefined) {
    if (run.spawnError === 'ENOENT') {
      return fail('notFound', `GraphMend: the interpreter ${interpreter.command} was not found. Select an existing interpreter, or ${SET_IT}.`);
    }
    return fail('notRunnable', `GraphMend: the interpreter ${interpreter.command} could not be started (${run.spawnError}). Select another interpreter, or ${SET_IT}.`);
  }
  const [minMajor, minMinor] = MIN_PYTHON;
  const v = parsed.pythonVersion;
  if (v && (v[0] < minMajor || (v[0] === minMajor && v[1] < minMinor))) {
    return fail('tooOld', `GraphMend: the interpreter ${interpreter.command} is Python ${v[0]}.${v[1]}; GraphMend needs Python ${minMajor}.${minMinor} or newer. Select a newer interpreter, or ${SET_IT}.`);
  }
  if (run.timedOut) {
    return fail('timeout', `GraphMend: the interpreter ${interpreter.command} did not answer within ${Math.round(timeoutMs / 1000)} s (checking \`import graphmend\`). Check it in a terminal with \`${cmd} -c "import graphmend"\`, or ${SET_IT}.`);
  }
  if (!v) {
    const why = lastLine(run.stderr) || `exit code ${run.exitCode}`;
    return fail('notPython', `GraphMend: ${cmd} did not answer like a Python interpreter (${why}). Select a Python interpreter, or ${SET_IT}.`);
  }
  if (parsed.graphmendVersion === undefined) {
    if (/No module named '?graphmend'?\s*$/m.test(run.stderr)) {
      return fail('noGraphmend', `GraphMend: the interpreter ${interpreter.command} cannot import graphmend. Run \`${cmd} -m pip install graphmend\` or set \`graphmend.interpreter\`.`);
    }
    const why = lastLine(run.stderr) || `exit code ${run.exitCode}`;
    return fail('importFailed', `GraphMend: the interpreter ${interpreter.command} failed to import graphmend (${why}). Reinstall it with \`${cmd} -m pip install --force-reinstall graphmend\`, or ${SET_IT}.`);
  }
  return { ok: true, pythonVersion: v, graphmendVersion: parsed.graphmendVersion };
}

export interface CheckOptions {
  timeoutMs?: number;
  cwd?: string;
}

/** Runs the check in the interpreter (killed after the timeout) and judges it. */
export function checkInterpreter(interpreter: Interpreter, options: CheckOptions = {}): Promise<CheckResult> {
  const timeoutMs = options.timeoutMs ?? CHECK_TIMEOUT_MS;
  return new Promise((resolve) => {
    execFile(
      interpreter.command,
      [...interpreter.args, '-c', CHECK_SCRIPT],
      { timeout: timeoutMs, killSignal: 'SIGKILL', cwd: options.cwd, windowsHide: true, encoding: 'utf8', maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        const err = error as (Omit<NodeJS.ErrnoException, 'code'> & { killed?: boolean; code?: string | number }) | null;
        const run: CheckRun = { timedOut: false, exitCode: 0, stdout: stdout ?? '', stderr: stderr ?? '' };
        if (err) {
          if (err.syscall?.startsWith('spawn')) {
            run.spawnError = String(err.code ?? err.message); // no process ran
          } else {
            run.timedOut = err.killed === true;
            run.exitCode = typeof err.code === 'number' ? err.code : null;
          }
        }
        resolve(judgeCheck(interpreter, run, timeoutMs));
      },
    );
  });
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
