// The `graphmend.*` settings, read into the initializationOptions object the server expects.
// Pure: the caller passes the configuration (vscode.WorkspaceConfiguration fits
// ConfigurationReader), so this module never touches the vscode API and is unit-tested as is.

import * as os from 'node:os';

export const SCOPES = ['default', 'compiled', 'module'] as const;
export const RUNTIMES = ['vendor', 'import', 'inline'] as const;
export const LOG_LEVELS = ['error', 'warning', 'info', 'debug'] as const;
export const CONFIGURATION_PREFERENCES = ['editorFirst', 'filesystemFirst', 'editorOnly'] as const;
export const PROBE_DEVICES = ['auto', 'cpu', 'cuda'] as const;
export const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;

export type Scope = (typeof SCOPES)[number];
export type Runtime = (typeof RUNTIMES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type ConfigurationPreference = (typeof CONFIGURATION_PREFERENCES)[number];
export type ProbeDevice = (typeof PROBE_DEVICES)[number];
export type Severity = (typeof SEVERITIES)[number];

/** Exactly what the server reads from initializationOptions (camelCase). */
export interface InitializationOptions {
  enable: boolean;
  fixOnSave: boolean;
  userCache: boolean;
  unsafeFixes: boolean;
  runtime: Runtime;
  lineLength: number;
  conditionalSeverity: Severity;
  scope: Scope;
  select: string[];
  ignore: string[];
  logLevel: LogLevel;
  configurationPreference: ConfigurationPreference;
  probe: { enable: boolean; timeoutSeconds: number; device: ProbeDevice };
}

export function defaultOptions(): InitializationOptions {
  return {
    enable: true,
    fixOnSave: false,
    userCache: true,
    unsafeFixes: false,
    runtime: 'vendor',
    lineLength: 88,
    conditionalSeverity: 'information',
    scope: 'default',
    select: [],
    ignore: [],
    logLevel: 'info',
    configurationPreference: 'editorFirst',
    probe: { enable: false, timeoutSeconds: 120, device: 'auto' },
  };
}

/** The part of vscode.WorkspaceConfiguration (for section "graphmend") this module uses. */
export interface ConfigurationReader {
  get(key: string): unknown;
}

export interface ReadResult<T> {
  value: T;
  /** One line per setting whose value was invalid and replaced by its default. */
  problems: string[];
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly config: ConfigurationReader) {}

  private invalid<T>(key: string, value: unknown, expected: string, fallback: T): T {
    this.problems.push(`graphmend.${key}: ${show(value)} is not ${expected}; using ${show(fallback)}`);
    return fallback;
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.config.get(key);
    if (value === undefined || value === null) return fallback;
    return typeof value === 'boolean' ? value : this.invalid(key, value, 'true or false', fallback);
  }

  choice<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const value = this.config.get(key);
    if (value === undefined || value === null) return fallback;
    return typeof value === 'string' && (allowed as readonly string[]).includes(value)
      ? (value as T)
      : this.invalid(key, value, `one of ${allowed.join(', ')}`, fallback);
  }

  /** A list of non-empty strings; a single string counts as a list of one. */
  strings(key: string): string[] {
    const value = this.config.get(key);
    if (value === undefined || value === null) return [];
    const items = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(items)) return this.invalid(key, value, 'a list of strings', []);
    const out: string[] = [];
    for (const item of items) {
      if (typeof item === 'string' && item.trim() !== '') {
        out.push(item.trim());
      } else {
        this.problems.push(`graphmend.${key}: ignoring the entry ${show(item)} (not a non-empty string)`);
      }
    }
    return out;
  }

  positiveNumber(key: string, fallback: number): number {
    const value = this.config.get(key);
    if (value === undefined || value === null) return fallback;
    return typeof value === 'number' && Number.isFinite(value) && value > 0
      ? value
      : this.invalid(key, value, 'a positive number', fallback);
  }
}

/** The initializationOptions for the server, from the `graphmend` configuration section. */
export function readInitializationOptions(config: ConfigurationReader): ReadResult<InitializationOptions> {
  const d = defaultOptions();
  const r = new Reader(config);
  const value: InitializationOptions = {
    enable: r.bool('enable', d.enable),
    fixOnSave: r.bool('fixOnSave', d.fixOnSave),
    userCache: r.bool('userCache', d.userCache),
    unsafeFixes: r.bool('unsafeFixes', d.unsafeFixes),
    runtime: r.choice('runtime', RUNTIMES, d.runtime),
    lineLength: r.positiveNumber('lineLength', d.lineLength),
    conditionalSeverity: r.choice('conditionalSeverity', SEVERITIES, d.conditionalSeverity),
    scope: r.choice('scope', SCOPES, d.scope),
    select: r.strings('select'),
    ignore: r.strings('ignore'),
    logLevel: r.choice('logLevel', LOG_LEVELS, d.logLevel),
    configurationPreference: r.choice('configurationPreference', CONFIGURATION_PREFERENCES, d.configurationPreference),
    probe: {
      enable: r.bool('probe.enable', d.probe.enable),
      timeoutSeconds: r.positiveNumber('probe.timeoutSeconds', d.probe.timeoutSeconds),
      device: r.choice('probe.device', PROBE_DEVICES, d.probe.device),
    },
  };
  return { value, problems: r.problems };
}

/** What `${...}` variables and a leading `~` in `graphmend.interpreter` expand to. */
export interface Substitutions {
  workspaceFolder?: string;
  userHome?: string;
  env?: Record<string, string | undefined>;
}

export function substituteVariables(text: string, subs: Substitutions): string {
  const home = subs.userHome ?? os.homedir();
  const env = subs.env ?? process.env;
  let out = text.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (whole, name: string, envName?: string) => {
    if (envName !== undefined) return env[envName] ?? '';
    if (name === 'userHome') return home;
    return subs.workspaceFolder ?? whole; // no folder open: leave it, the check reports the path
  });
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) out = home + out.slice(1);
  return out;
}

/** `graphmend.interpreter`, variables expanded: [] when unset (then the Python extension decides). */
export function readInterpreterSetting(config: ConfigurationReader, subs: Substitutions): ReadResult<string[]> {
  const r = new Reader(config);
  const items = r.strings('interpreter').map((s) => substituteVariables(s, subs));
  return { value: items, problems: r.problems };
}

/**
 * Whether a configuration change needs a server restart: any `graphmend.*` setting except
 * `graphmend.trace.server`, which the language client applies by itself.
 */
export function needsRestart(affects: (section: string) => boolean): boolean {
  if (!affects('graphmend')) return false;
  const keys = [
    'enable', 'interpreter', 'fixOnSave', 'userCache', 'unsafeFixes', 'runtime', 'lineLength', 'conditionalSeverity', 'scope', 'select', 'ignore',
    'logLevel', 'configurationPreference', 'probe',
  ];
  return keys.some((k) => affects(`graphmend.${k}`)) || !affects('graphmend.trace');
}
