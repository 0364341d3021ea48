// The Python extension (ms-python.python), used when it is installed: its active environment
// gives the interpreter, and a change of that environment restarts the server. GraphMend does not
// depend on it (no extensionDependencies).

import * as vscode from 'vscode';
import type { PythonEnvironment } from './interpreter';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

// The subset of the Python extension's `environments` API used here
// (https://github.com/microsoft/vscode-python/wiki/Python-Environment-APIs).
interface EnvironmentPath {
  readonly id: string;
  readonly path: string;
}
interface ResolvedEnvironment {
  readonly id: string;
  readonly path: string;
  readonly executable: { readonly uri: vscode.Uri | undefined };
}
interface ActiveEnvironmentPathChangeEvent extends EnvironmentPath {
  readonly resource: vscode.WorkspaceFolder | undefined;
}
export interface PythonExtensionApi {
  readonly environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri | vscode.WorkspaceFolder): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    readonly onDidChangeActiveEnvironmentPath: vscode.Event<ActiveEnvironmentPathChangeEvent>;
  };
}

export function isPythonExtensionInstalled(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

/** The Python extension's API (activating it if needed); undefined when it is not installed. */
export async function getPythonApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!extension) return undefined;
  const api = extension.isActive ? extension.exports : await extension.activate();
  if (!api?.environments) throw new Error('the Python extension has no environments API (too old?)');
  return api;
}

/** The Python extension's active environment for `resource`, resolved to its executable. */
export async function activeEnvironment(resource: vscode.Uri | undefined): Promise<PythonEnvironment | undefined> {
  const api = await getPythonApi();
  if (!api) return undefined;
  const envPath = api.environments.getActiveEnvironmentPath(resource);
  if (!envPath) return undefined;
  const resolved = await api.environments.resolveEnvironment(envPath);
  if (!resolved) return { path: envPath.path, executable: undefined };
  return { path: resolved.path, executable: resolved.executable.uri?.fsPath };
}

/** Calls `listener` when the active environment changes; undefined when there is no Python extension. */
export async function onDidChangeActiveEnvironment(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await getPythonApi();
  return api?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
