// Preloaded (node --import) into the Temporal SDK's workflow thread, and nowhere else, by worker/sandbox.ts
// when WORKFLOW_DEBUG_AIDS=off. It turns off two debugging aids of the SDK's workflow sandbox that cost
// more than the workflow code itself (see worker/sandbox.ts):
// - the timeout of every call into the workflow's vm context: node starts a watchdog thread for each call
//   made with `timeout`, and the SDK makes three or more per activation;
// - the promise hook that records a source-mapped stack trace for every promise a workflow creates (for
//   the Temporal UI's "Stack Trace" tab of a running workflow).
import v8 from 'node:v8';
import vm from 'node:vm';

type RunOptions = vm.RunningScriptOptions | string | undefined;

function withoutTimeout(options: RunOptions): RunOptions {
  if (!options || typeof options !== 'object' || !('timeout' in options)) return options;
  const rest = { ...options };
  delete rest.timeout;
  return rest;
}

const runInContext = vm.Script.prototype.runInContext;
vm.Script.prototype.runInContext = function runInContextWithoutWatchdog(
  this: vm.Script,
  context: vm.Context,
  options?: vm.RunningScriptOptions,
) {
  return runInContext.call(this, context, withoutTimeout(options) as vm.RunningScriptOptions | undefined);
};
const runCodeInContext = vm.runInContext;
vm.runInContext = function runCodeInContextWithoutWatchdog(code: string, context: vm.Context, options?: RunOptions) {
  return runCodeInContext(code, context, withoutTimeout(options));
};
// The SDK installs its hook once per thread, after this file ran; a hook that is never created costs nothing.
v8.promiseHooks.createHook = function noPromiseHook() {
  return function stop() {};
};
