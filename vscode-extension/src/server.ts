// The language client for `<python> -m graphmend serve` over stdio.

import type * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  ErrorHandler,
  ExecuteCommandParams,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import type { Interpreter } from './interpreter';
import type { InitializationOptions } from './settings';

/** Also the prefix of the `graphmend.trace.server` setting the client reads. */
export const CLIENT_ID = 'graphmend';
export const CLIENT_NAME = 'GraphMend';
/** Commands the server advertises (executeCommandProvider); the client registers them itself. */
export const SERVER_COMMANDS = ['graphmend.fixAll', 'graphmend.showLog'] as const;

export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'python' },
  { scheme: 'untitled', language: 'python' },
  // The Python cells of notebooks (.ipynb): their text reaches the server through LSP notebook
  // sync (the server announces it), and hovers, code actions and diagnostics are per cell.
  { notebook: '*', language: 'python' },
];

export function serverArgs(interpreter: Interpreter): string[] {
  return [...interpreter.args, '-m', 'graphmend', 'serve'];
}

export function makeServerOptions(interpreter: Interpreter, cwd: string | undefined): ServerOptions {
  // No `transport`: with TransportKind.stdio the client would append `--stdio` to the
  // arguments; without one it talks over stdio all the same and runs exactly serverArgs().
  return {
    command: interpreter.command,
    args: serverArgs(interpreter),
    options: cwd === undefined ? {} : { cwd },
  };
}

export function makeClientOptions(
  initializationOptions: InitializationOptions,
  outputChannel: vscode.OutputChannel,
  errorHandler?: ErrorHandler,
): LanguageClientOptions {
  return {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel,
    traceOutputChannel: outputChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions,
    errorHandler,
  };
}

/**
 * The client's error handling: the default one (restart a crashed server up to 4 times in 3
 * minutes) for the current client only. A client that is not current (still starting, or
 * replaced by a restart) is never restarted, so a server that dies while starting is reported
 * once instead of retried, and a replaced client cannot come back as a second server.
 */
function errorHandlerFor(client: () => LanguageClient, isCurrent: () => boolean): ErrorHandler {
  let fallback: ErrorHandler | undefined;
  const defaults = () => (fallback ??= client().createDefaultErrorHandler());
  return {
    // A write error while starting (the server already gone): the close that follows decides,
    // and the start failure is reported once, by the caller of startClient.
    error: (error, message, count) => (isCurrent() ? defaults().error(error, message, count) : { action: ErrorAction.Continue, handled: true }),
    closed: () => (isCurrent() ? defaults().closed() : { action: CloseAction.DoNotRestart, handled: true }),
  };
}

/**
 * vscode-languageclient 9 calls `void this.stop()` when `initialize` fails, while the client is
 * still starting, where stop() rejects: an unhandled rejection. Such a stop is let through (the
 * node client still kills the server process in it) with its rejection handled. Our own stops go
 * through stopClient(), which waits while a client is starting.
 */
class GraphMendClient extends LanguageClient {
  override stop(timeout?: number): Promise<void> {
    const starting = this.state === State.Starting;
    const stopping = super.stop(timeout);
    return starting ? stopping.catch(() => undefined) : stopping;
  }
}

export function createClient(
  interpreter: Interpreter,
  cwd: string | undefined,
  initializationOptions: InitializationOptions,
  outputChannel: vscode.OutputChannel,
  isCurrent: (client: LanguageClient) => boolean,
): LanguageClient {
  const handler = errorHandlerFor(() => client, () => isCurrent(client));
  const client: LanguageClient = new GraphMendClient(
    CLIENT_ID,
    CLIENT_NAME,
    makeServerOptions(interpreter, cwd),
    {
      ...makeClientOptions(initializationOptions, outputChannel, handler),
      // Failed initialization is reported by the caller of startClient, not by a second message.
      initializationFailedHandler: () => false,
    },
  );
  return client;
}

/**
 * Starts the client; rejects unless it is running then, and makes sure nothing of a failed
 * start keeps running. (`LanguageClient.start()` resolves, not rejects, when the server exits
 * before it answers `initialize`, hence the state check.)
 */
export async function startClient(client: LanguageClient): Promise<void> {
  const starting = client.start();
  // When the server exits before answering `initialize`, vscode-languageclient 9 rejects a start
  // promise it no longer returns (it clears `_onStart` on close): nobody would handle that
  // rejection. Handle it here; the state check below reports the failure.
  (client as unknown as { _onStart?: Promise<void> })._onStart?.catch(() => undefined);
  try {
    await starting;
  } catch (err) {
    await stopClient(client).catch(() => undefined);
    throw err;
  }
  if (client.state !== State.Running) {
    await stopClient(client).catch(() => undefined);
    throw new Error('the server exited while starting; its error output is in the GraphMend log');
  }
}

/**
 * Stops the client whatever its state: `LanguageClient.stop()` throws while the client is
 * starting, so a starting client is first given time to finish.
 */
export async function stopClient(client: LanguageClient, timeoutMs = 10_000): Promise<void> {
  if (client.state === State.Starting) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const sub = client.onDidChangeState((e) => {
        if (e.newState !== State.Starting) done();
      });
      function done() {
        clearTimeout(timer);
        sub.dispose();
        resolve();
      }
    });
  }
  if (client.state === State.Running) await client.stop(2000);
}

/** The `workspace/executeCommand` that mends every graph break in a document. */
export function fixAllParams(uri: string, version: number): ExecuteCommandParams {
  return { command: 'graphmend.fixAll', arguments: [{ uri, version }] };
}

/** Asks the server to mend the document (the server answers with a workspace/applyEdit). */
export async function requestFixAll(client: LanguageClient, document: vscode.TextDocument): Promise<unknown> {
  const uri = client.code2ProtocolConverter.asUri(document.uri);
  return client.sendRequest(ExecuteCommandRequest.type, fixAllParams(uri, document.version));
}

/**
 * Why the server did not mend, from its answer to graphmend.fixAll
 * (`{"applied": false, "reason": "nothing to mend"}`); undefined when it did, or said nothing.
 */
export function notAppliedReason(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const { applied, reason } = result as { applied?: unknown; reason?: unknown };
  if (applied !== false) return undefined;
  return typeof reason === 'string' && reason.trim() !== '' ? reason.trim().replace(/\.$/, '') : 'the file was not changed';
}
