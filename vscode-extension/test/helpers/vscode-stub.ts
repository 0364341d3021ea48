// A small in-memory stand-in for the `vscode` module (VS Code itself cannot run here): the parts
// of the API the extension uses, with their effects recorded in `stub` for the tests to read.
// register-vscode-stub.ts makes `require('vscode')` return this module.

type Listener<T> = (e: T) => unknown;

export class Disposable {
  constructor(private readonly callOnDispose: () => unknown = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.callOnDispose();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    });
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  get listenerCount(): number {
    return this.listeners.length;
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationTokenSource {
  private readonly cancelled = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.cancelled.event,
  };
  cancel(): void {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this.cancelled.fire();
  }
  dispose(): void {
    this.cancelled.dispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static parse(value: string): Uri {
    const m = /^([a-z][\w+.-]*):(?:\/\/)?(.*)$/i.exec(value);
    return m ? new Uri(m[1], decodeURI(m[2])) : new Uri('file', value);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return this.scheme === 'file' ? `file://${encodeURI(this.path)}` : `${this.scheme}:${this.path}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    if (typeof a === 'number' && typeof b === 'number') {
      this.start = new Position(a, b);
      this.end = new Position(c ?? a, d ?? b);
    } else {
      this.start = a as Position;
      this.end = b as Position;
    }
  }
}

export class TextEdit {
  constructor(
    readonly range: Range,
    readonly newText: string,
  ) {}
}

export class WorkspaceEdit {
  readonly edits: { uri: Uri; edit: TextEdit }[] = [];
  replace(uri: Uri, range: Range, newText: string): void {
    this.edits.push({ uri, edit: new TextEdit(range, newText) });
  }
  insert(uri: Uri, position: Position, newText: string): void {
    this.replace(uri, new Range(position, position), newText);
  }
  delete(uri: Uri, range: Range): void {
    this.replace(uri, range, '');
  }
  set(uri: Uri, edits: TextEdit[]): void {
    for (const edit of edits) this.edits.push({ uri, edit });
  }
  get size(): number {
    return new Set(this.edits.map((e) => e.uri.toString())).size;
  }
}

export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  static readonly QuickFix = new CodeActionKind('quickfix');
  static readonly Refactor = new CodeActionKind('refactor');
  static readonly Source = new CodeActionKind('source');
  static readonly SourceFixAll = new CodeActionKind('source.fixAll');
  static readonly SourceOrganizeImports = new CodeActionKind('source.organizeImports');
  constructor(readonly value: string) {}
  append(part: string): CodeActionKind {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
  contains(other: CodeActionKind): boolean {
    return this.value === other.value || other.value.startsWith(`${this.value}.`);
  }
  intersects(other: CodeActionKind): boolean {
    return this.contains(other) || other.contains(this);
  }
}

/** A tab showing a text document (the only kind of tab the stub has). */
export class TabInputText {
  constructor(readonly uri: Uri) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}

export interface FakeStatusBarItem {
  id: string;
  alignment: StatusBarAlignment;
  priority: number;
  name?: string;
  text: string;
  tooltip?: string;
  command?: string;
  visible: boolean;
  show(): void;
  hide(): void;
  dispose(): void;
}

export interface FakeDocument {
  uri: Uri;
  languageId: string;
  version: number;
  fileName: string;
  isUntitled: boolean;
  isClosed: boolean;
  getText(): string;
  lineCount: number;
  eol: number;
}

export function makeDocument(path: string, languageId = 'python', version = 1, text = ''): FakeDocument {
  return {
    uri: Uri.file(path),
    languageId,
    version,
    fileName: path,
    isUntitled: false,
    isClosed: false,
    getText: () => text,
    lineCount: text.split('\n').length,
    eol: 1,
  };
}

export interface MessageCall {
  severity: 'error' | 'warning' | 'info';
  message: string;
  items: string[];
}

export interface FakeExtension {
  id: string;
  isActive: boolean;
  exports: unknown;
  packageJSON: unknown;
  activate(): Promise<unknown>;
}

/** What the extension did, and the knobs the tests turn. */
export const stub = {
  config: {} as Record<string, unknown>,
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  executed: [] as { command: string; args: unknown[] }[],
  messages: [] as MessageCall[],
  /** The button the next message "clicks", if any. */
  messageChoice: undefined as string | undefined,
  statusItems: [] as FakeStatusBarItem[],
  output: [] as { level: string; message: string }[],
  outputShown: 0,
  diagnostics: new Map<string, unknown[]>(),
  extensions: new Map<string, FakeExtension>(),
  onDidChangeDiagnostics: new EventEmitter<{ uris: Uri[] }>(),
  onDidChangeActiveTextEditor: new EventEmitter<unknown>(),
  onDidChangeConfiguration: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
  onDidChangeExtensions: new EventEmitter<void>(),
  activeTextEditor: undefined as { document: FakeDocument } | undefined,
  textDocuments: [] as FakeDocument[],
  appliedEdits: [] as WorkspaceEdit[],
  onDidOpenTextDocument: new EventEmitter<FakeDocument>(),

  fileUri(path: string): Uri {
    return Uri.file(path);
  },

  openDocument(document: FakeDocument): void {
    this.textDocuments.push(document);
    this.onDidOpenTextDocument.fire(document);
  },

  reset(): void {
    this.config = {};
    this.workspaceFolders = undefined;
    this.commands.clear();
    this.executed = [];
    this.messages = [];
    this.messageChoice = undefined;
    this.statusItems = [];
    this.output = [];
    this.outputShown = 0;
    this.diagnostics.clear();
    this.extensions.clear();
    this.activeTextEditor = undefined;
    this.textDocuments = [];
    this.appliedEdits = [];
    for (const e of [this.onDidOpenTextDocument, this.onDidChangeDiagnostics, this.onDidChangeActiveTextEditor, this.onDidChangeConfiguration, this.onDidChangeExtensions]) {
      e.dispose();
    }
  },

  /** Sets `graphmend.<key>` values and fires the configuration change event for them. */
  changeConfig(values: Record<string, unknown>): void {
    Object.assign(this.config, values);
    const keys = Object.keys(values).map((k) => `graphmend.${k}`);
    this.onDidChangeConfiguration.fire({
      affectsConfiguration: (section: string) => keys.some((k) => k === section || k.startsWith(`${section}.`) || section.startsWith(`${k}.`)),
    });
  },

  setActiveEditor(document: FakeDocument | undefined): void {
    this.activeTextEditor = document ? { document } : undefined;
    this.onDidChangeActiveTextEditor.fire(this.activeTextEditor);
  },

  setDiagnostics(uri: Uri, diagnostics: unknown[]): void {
    this.diagnostics.set(uri.toString(), diagnostics);
    this.onDidChangeDiagnostics.fire({ uris: [uri] });
  },
};

function message(severity: MessageCall['severity']) {
  return (msg: string, ...items: unknown[]): Promise<string | undefined> => {
    const labels = items.filter((i): i is string => typeof i === 'string');
    stub.messages.push({ severity, message: msg, items: labels });
    const choice = stub.messageChoice;
    return Promise.resolve(choice !== undefined && labels.includes(choice) ? choice : undefined);
  };
}

function outputChannel(name: string) {
  const log = (level: string) => (message: string | Error, ...args: unknown[]) => {
    const text = [message instanceof Error ? message.message : message, ...args.map(String)].join(' ');
    stub.output.push({ level, message: text });
  };
  return {
    name,
    logLevel: LogLevel.Info,
    onDidChangeLogLevel: new EventEmitter<LogLevel>().event,
    trace: log('trace'),
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    append: (value: string) => stub.output.push({ level: 'raw', message: value }),
    appendLine: (value: string) => stub.output.push({ level: 'raw', message: value }),
    replace: () => undefined,
    clear: () => undefined,
    show: () => {
      stub.outputShown++;
    },
    hide: () => undefined,
    dispose: () => undefined,
  };
}

export const window = {
  get activeTextEditor() {
    return stub.activeTextEditor;
  },
  visibleTextEditors: [] as unknown[],
  /** One tab group with a tab for each open document. */
  tabGroups: {
    get all() {
      return [{ isActive: true, tabs: stub.textDocuments.map((d) => ({ input: new TabInputText(d.uri), label: d.fileName })) }];
    },
  },
  onDidChangeActiveTextEditor: (l: Listener<unknown>) => stub.onDidChangeActiveTextEditor.event(l),
  onDidChangeVisibleTextEditors: new EventEmitter<unknown>().event,
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number): FakeStatusBarItem {
    const item: FakeStatusBarItem = {
      id,
      alignment,
      priority,
      text: '',
      visible: false,
      show() {
        item.visible = true;
      },
      hide() {
        item.visible = false;
      },
      dispose() {
        item.visible = false;
      },
    };
    stub.statusItems.push(item);
    return item;
  },
  createOutputChannel: (name: string) => outputChannel(name),
  withProgress: <R>(_options: unknown, task: (progress: { report(value: unknown): void }, token: unknown) => Thenable<R>) =>
    task({ report: () => undefined }, new CancellationTokenSource().token),
  showErrorMessage: message('error'),
  showWarningMessage: message('warning'),
  showInformationMessage: message('info'),
};

function diagnosticCollection(name: string) {
  const own = new Set<string>();
  const set = (uri: Uri, diagnostics: unknown[] | undefined) => {
    own.add(uri.toString());
    stub.setDiagnostics(uri, diagnostics ?? []);
  };
  const collection = {
    name,
    set(first: Uri | [Uri, unknown[] | undefined][], diagnostics?: unknown[]) {
      if (Array.isArray(first)) for (const [uri, d] of first) set(uri, d);
      else set(first, diagnostics);
    },
    delete: (uri: Uri) => set(uri, []),
    clear: () => {
      for (const key of own) stub.setDiagnostics(Uri.parse(key), []);
      own.clear();
    },
    get: (uri: Uri) => stub.diagnostics.get(uri.toString()),
    has: (uri: Uri) => own.has(uri.toString()),
    forEach: () => undefined,
    dispose: () => collection.clear(),
  };
  return collection;
}

export const languages = {
  createDiagnosticCollection: (name: string) => diagnosticCollection(name),
  /** Document selectors of { scheme?, language? } filters (all the extension uses). */
  match(selector: unknown, document: FakeDocument): number {
    const filters = (Array.isArray(selector) ? selector : [selector]) as ({ scheme?: string; language?: string } | string)[];
    const hit = filters.some((f) =>
      typeof f === 'string'
        ? f === document.languageId
        : (f.language === undefined || f.language === document.languageId) && (f.scheme === undefined || f.scheme === document.uri.scheme),
    );
    return hit ? 10 : 0;
  },
  getDiagnostics: (uri: Uri) => stub.diagnostics.get(uri.toString()) ?? [],
  onDidChangeDiagnostics: (l: Listener<{ uris: Uri[] }>) => stub.onDidChangeDiagnostics.event(l),
};

/** The `graphmend` section as one object, as `getConfiguration().get('graphmend')` gives it. */
function sectionObject(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stub.config)) {
    const parts = key.split('.');
    let node = out;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

export const workspace = {
  get workspaceFolders() {
    return stub.workspaceFolders;
  },
  getConfiguration(section?: string) {
    const prefix = section ? `${section}.` : '';
    return {
      get: (key: string, defaultValue?: unknown) => {
        const full = `${prefix}${key}`;
        if (full === 'graphmend') return sectionObject();
        const v = stub.config[full.replace(/^graphmend\./, '')];
        return v === undefined ? defaultValue : v;
      },
      has: (key: string) => `${prefix}${key}`.replace(/^graphmend\./, '') in stub.config,
      inspect: () => undefined,
      update: () => Promise.resolve(),
    };
  },
  onDidChangeConfiguration: (l: Listener<{ affectsConfiguration(section: string): boolean }>) => stub.onDidChangeConfiguration.event(l),
  get textDocuments() {
    return stub.textDocuments;
  },
  onDidOpenTextDocument: (l: Listener<FakeDocument>) => stub.onDidOpenTextDocument.event(l),
  applyEdit(edit: WorkspaceEdit): Promise<boolean> {
    stub.appliedEdits.push(edit);
    return Promise.resolve(true);
  },
};

export const commands = {
  registerCommand(id: string, handler: (...args: unknown[]) => unknown): Disposable {
    if (stub.commands.has(id)) throw new Error(`command '${id}' already exists`);
    stub.commands.set(id, handler);
    return new Disposable(() => stub.commands.delete(id));
  },
  async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    stub.executed.push({ command: id, args });
    const handler = stub.commands.get(id);
    return handler ? handler(...args) : undefined;
  },
};

export const extensions = {
  getExtension: (id: string) => stub.extensions.get(id),
  onDidChange: (l: Listener<void>) => stub.onDidChangeExtensions.event(l),
};

export const env = { language: 'en', appName: 'stub', machineId: 'stub', sessionId: 'stub' };
export const version = '1.82.0';
