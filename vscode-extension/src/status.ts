// The status-bar item with the number of graph breaks GraphMend found in the active file.
// countBreaks and statusView are pure; BreakCountStatus wires them to the vscode API.

import * as vscode from 'vscode';

export const DIAGNOSTIC_SOURCE = 'graphmend';
/** A syntax error: a finding, but not a graph break. */
export const SYNTAX_ERROR_CODE = 'GM001';

export type ServerState = 'starting' | 'running' | 'disabled' | 'error';

/** The fields of vscode.Diagnostic that the count reads. */
export interface DiagnosticLike {
  source?: string;
  code?: string | number | { value: string | number };
}

function codeOf(d: DiagnosticLike): string | undefined {
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  return code === undefined ? undefined : String(code);
}

/** GraphMend's diagnostics that are graph breaks (every one but GM001, the syntax error). */
export function countBreaks(diagnostics: readonly DiagnosticLike[]): number {
  return diagnostics.filter((d) => d.source === DIAGNOSTIC_SOURCE && codeOf(d) !== SYNTAX_ERROR_CODE).length;
}

export interface StatusView {
  visible: boolean;
  text: string;
  tooltip: string;
  /** Command run on click. */
  command?: string;
}

export const HIDDEN: StatusView = { visible: false, text: '', tooltip: '' };

/** What the item shows for the active editor's language, the server's state and the count. */
export function statusView(languageId: string | undefined, state: ServerState, breaks: number): StatusView {
  if (languageId !== 'python' || state === 'disabled') return HIDDEN;
  if (state === 'error') {
    return {
      visible: true,
      text: '$(warning) GraphMend: not running',
      tooltip: 'The GraphMend server is not running. Click to show its log.',
      command: 'graphmend.showOutput',
    };
  }
  if (state === 'starting') {
    return { visible: true, text: '$(sync~spin) GraphMend', tooltip: 'The GraphMend server is starting.', command: 'graphmend.showOutput' };
  }
  if (breaks === 0) {
    return { visible: true, text: '$(check) GraphMend: no breaks', tooltip: 'GraphMend found no torch.compile graph breaks in this file.' };
  }
  const noun = breaks === 1 ? 'break' : 'breaks';
  return {
    visible: true,
    text: `$(pulse) GraphMend: ${breaks} ${noun}`,
    tooltip: `GraphMend found ${breaks} torch.compile graph ${noun} in this file. Click to open the Problems view.`,
    command: 'workbench.actions.view.problems',
  };
}

export class BreakCountStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private state: ServerState = 'starting';

  constructor() {
    this.item = vscode.window.createStatusBarItem('graphmend.breaks', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'GraphMend';
    this.disposables.push(
      this.item,
      vscode.languages.onDidChangeDiagnostics((e) => {
        const active = vscode.window.activeTextEditor?.document.uri.toString();
        if (active !== undefined && e.uris.some((u) => u.toString() === active)) this.update();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
    );
    this.update();
  }

  setState(state: ServerState): void {
    this.state = state;
    this.update();
  }

  update(): void {
    const document = vscode.window.activeTextEditor?.document;
    const breaks = document ? countBreaks(vscode.languages.getDiagnostics(document.uri)) : 0;
    const view = statusView(document?.languageId, this.state, breaks);
    if (!view.visible) {
      this.item.hide();
      return;
    }
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.command;
    this.item.show();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
