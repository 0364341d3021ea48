// Activation: the output channel, the status-bar item, the commands, and the server that
// (re)starts on activation, on `GraphMend: Restart Server`, on a change of a `graphmend.*`
// setting and on a change of the Python extension's interpreter.

import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';
import {
  OPEN_SETTINGS,
  problemActions,
  RESTART_SERVER,
  SELECT_INTERPRETER,
  ServerController,
  SHOW_LOG,
} from './controller';
import { checkInterpreter, errorText, InterpreterProblem, resolveInterpreter } from './interpreter';
import { activeEnvironment, isPythonExtensionInstalled, onDidChangeActiveEnvironment } from './python';
import { createClient, notAppliedReason, requestFixAll, startClient, stopClient } from './server';
import { needsRestart, readInitializationOptions, readInterpreterSetting } from './settings';
import { BreakCountStatus } from './status';

/** A started client, as the controller holds it. */
interface Running {
  client: LanguageClient;
  stop(): Promise<void>;
}

let controller: ServerController<Running> | undefined;

/** The folder whose settings and interpreter the (single) server uses: the first one. */
function mainFolder(): vscode.Uri | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

function configuration(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('graphmend', mainFolder());
}

function interpreterSetting(output: vscode.LogOutputChannel): string[] {
  const folder = mainFolder();
  const { value, problems } = readInterpreterSetting(configuration(), {
    workspaceFolder: folder?.scheme === 'file' ? folder.fsPath : undefined,
  });
  for (const p of problems) output.warn(p);
  return value;
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('GraphMend', { log: true });
  const status = new BreakCountStatus();
  context.subscriptions.push(output, status);
  output.info(`GraphMend extension ${String(context.extension.packageJSON.version)}`);

  const cwd = () => {
    const folder = mainFolder();
    return folder?.scheme === 'file' ? folder.fsPath : undefined;
  };

  const showProblem = async (problem: InterpreterProblem) => {
    const choice = await vscode.window.showErrorMessage(problem.message, ...problemActions(problem, isPythonExtensionInstalled()));
    if (choice === SELECT_INTERPRETER) await vscode.commands.executeCommand('python.setInterpreter');
    else if (choice === OPEN_SETTINGS) await vscode.commands.executeCommand('workbench.action.openSettings', 'graphmend.interpreter');
    else if (choice === RESTART_SERVER) await vscode.commands.executeCommand('graphmend.restart');
    else if (choice === SHOW_LOG) output.show();
  };

  const ctl = new ServerController<Running>({
    isEnabled: () => readInitializationOptions(configuration()).value.enable,
    resolveInterpreter: () =>
      resolveInterpreter({
        setting: interpreterSetting(output),
        pythonExtension: isPythonExtensionInstalled() ? () => activeEnvironment(mainFolder()) : undefined,
      }),
    checkInterpreter: (interpreter) => checkInterpreter(interpreter, { cwd: cwd() }),
    startClient: async (interpreter) => {
      const { value: read, problems } = readInitializationOptions(configuration());
      for (const p of problems) output.warn(p);
      // The probe runs workspace code: the server refuses it unless the editor trusts the workspace
      // (this extension does not start at all in untrusted workspaces; the flag keeps the rule explicit).
      const options = { ...read, workspaceTrusted: vscode.workspace.isTrusted !== false };
      output.info(`initializationOptions: ${JSON.stringify(options)}`);
      const client = createClient(interpreter, cwd(), options, output, (c) => ctl.client?.client === c);
      client.onDidChangeState((e) => {
        if (ctl.client?.client !== client) return; // starting, or replaced: the controller reports
        if (e.newState === State.Running) status.setState('running');
        else if (e.newState === State.Starting) status.setState('starting');
        else status.setState('error'); // crashed more often than the client restarts it
      });
      await startClient(client);
      return { client, stop: () => stopClient(client) };
    },
    reportProblem: (problem) => void showProblem(problem),
    log: (level, message) => output[level](message),
    setState: (state) => status.setState(state),
  });
  controller = ctl;

  const mendFile = async () => {
    const document = vscode.window.activeTextEditor?.document;
    if (!document || document.languageId !== 'python') {
      void vscode.window.showWarningMessage('GraphMend: open a Python file to mend its graph breaks.');
      return;
    }
    const client = ctl.client?.client;
    if (!readInitializationOptions(configuration()).value.enable) {
      void vscode.window.showWarningMessage('GraphMend is turned off (`graphmend.enable` is false).');
      return;
    }
    if (!client || client.state !== State.Running) {
      const choice = await vscode.window.showWarningMessage('GraphMend: the server is not running.', SHOW_LOG);
      if (choice === SHOW_LOG) output.show();
      return;
    }
    try {
      const reason = notAppliedReason(await requestFixAll(client, document));
      if (reason !== undefined) void vscode.window.showInformationMessage(`GraphMend: ${reason}.`);
    } catch (err) {
      output.error(`graphmend.fixAll failed: ${errorText(err)}`);
      void vscode.window.showErrorMessage(`GraphMend: mending failed (${errorText(err)}).`);
    }
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('graphmend.restart', () => ctl.restart('restart command')),
    vscode.commands.registerCommand('graphmend.showOutput', () => output.show()),
    vscode.commands.registerCommand('graphmend.mendFile', mendFile),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (needsRestart((section) => e.affectsConfiguration(section))) void ctl.restart('settings changed');
    }),
  );

  // The Python extension: follow its interpreter (unless graphmend.interpreter is set), and
  // start using it when it is installed while GraphMend runs.
  let watchingPython = false;
  const watchPython = async () => {
    if (watchingPython || !isPythonExtensionInstalled()) return false;
    watchingPython = true;
    try {
      const sub = await onDidChangeActiveEnvironment(() => {
        if (interpreterSetting(output).length === 0) void ctl.restart('Python interpreter changed');
      });
      if (sub) context.subscriptions.push(sub);
      return sub !== undefined;
    } catch (err) {
      output.warn(`cannot follow the Python extension's interpreter: ${errorText(err)}`);
      return false;
    }
  };
  context.subscriptions.push(
    vscode.extensions.onDidChange(async () => {
      if (!watchingPython && (await watchPython()) && !ctl.client) void ctl.restart('Python extension installed');
    }),
  );

  void watchPython();
  void ctl.restart('activation');
}

export function deactivate(): Promise<void> | undefined {
  const ctl = controller;
  controller = undefined;
  return ctl?.stop();
}
