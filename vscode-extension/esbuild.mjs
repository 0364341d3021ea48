// Bundles src/extension.ts and its dependencies (vscode-languageclient) into dist/extension.js.
// `--production` minifies without source maps; `--watch` rebuilds on change.
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

// vscode-languageclient runs terminateProcess.sh (next to its own code) to kill a server that
// does not exit after shutdown; bundled, "next to its code" is dist/.
function copyTerminateScript() {
  const require = createRequire(import.meta.url);
  const nodeMain = require.resolve('vscode-languageclient/node');
  const script = join(dirname(nodeMain), 'lib', 'node', 'terminateProcess.sh');
  rmSync('dist', { recursive: true, force: true });
  mkdirSync('dist', { recursive: true });
  copyFileSync(script, 'dist/terminateProcess.sh');
  chmodSync('dist/terminateProcess.sh', 0o755);
}

const options = {
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
};

copyTerminateScript();
if (watch) {
  const ctx = await esbuild.context({ ...options, logLevel: 'info' });
  await ctx.watch();
} else {
  await esbuild.build(options);
}
