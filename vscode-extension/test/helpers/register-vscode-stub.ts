// Loaded with `node --require` before the tests: `require('vscode')` returns vscode-stub.ts.
// Names the stub does not define (vscode-languageclient subclasses CodeAction, Diagnostic, ...
// when it loads) are plain empty classes.

import Module = require('node:module');
import * as path from 'node:path';

const STUB_PATH = path.join(__dirname, 'vscode-stub.js');

// eslint-disable-next-line @typescript-eslint/no-require-imports
const real = require(STUB_PATH) as Record<string, unknown>;

// In the namespaces, an event the stub does not define (`onDidChangeTextDocument`, ...) is one
// that never fires, and a provider registration (`registerHoverProvider`, ...) does nothing.
const disposable = () => ({ dispose: () => undefined });
for (const ns of ['window', 'workspace', 'languages', 'commands', 'extensions', 'env']) {
  real[ns] = new Proxy(real[ns] as object, {
    get(target, key) {
      if (typeof key === 'string' && !(key in target) && /^(on|register)[A-Z]/.test(key)) return disposable;
      return Reflect.get(target, key);
    },
  });
}

const fillers = new Map<string, unknown>();
const proxy = new Proxy(real, {
  get(target, key) {
    if (typeof key === 'symbol' || key in target) return Reflect.get(target, key);
    if (key === 'then' || key === '__esModule') return undefined;
    if (!fillers.has(key)) fillers.set(key, class {});
    return fillers.get(key);
  },
});

const cached = require.cache[STUB_PATH];
if (cached) cached.exports = proxy;

type Resolve = (request: string, ...rest: unknown[]) => string;
const mod = Module as unknown as { _resolveFilename: Resolve };
const original = mod._resolveFilename;
mod._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  if (request === 'vscode') return STUB_PATH;
  return original.call(this, request, ...rest);
};
