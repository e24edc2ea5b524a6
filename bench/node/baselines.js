// Node-side baselines for bench/bench_sandbox.py, kept warm: one JSON request per line on
// stdin, one JSON answer per line on stdout. Each request runs `n` repetitions of one workload
// and answers the per-repetition median in microseconds, timed inside node (no pipe in it).
//   {"engine": "vm" | "emscripten", "work": "instantiate" | "fresh" | "reused" | "host" | "timeout", "n": 50}
// quickjs-emscripten is optional (npm ci --prefix bench/node); without it, "emscripten"
// requests answer {"skip": "..."}.
'use strict';
const vm = require('vm');
const readline = require('readline');
const { webcrypto } = require('crypto');

const CODE = '(function handler(a){return a.x+1})({x:1})';

function median(fn, n) {
  const t = [];
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    fn();
    t.push(Number(process.hrtime.bigint() - s) / 1e3);
  }
  t.sort((a, b) => a - b);
  return t[t.length >> 1];
}

const reusedContext = vm.createContext({});
const buf = new Uint8Array(4);
const nodeWork = {
  instantiate: () => vm.createContext({}),
  fresh: () => vm.runInNewContext(CODE),
  reused: () => vm.runInContext(CODE, reusedContext),
  // 1000 getRandomValues per repetition: the answer is divided by 1000
  host: () => { for (let i = 0; i < 1000; i++) webcrypto.getRandomValues(buf); },
};

let QuickJS = null;
let emscriptenSkip = null;
let emReused = null;
const emWork = {
  // a runtime and a context, as a fresh sandbox (the wasm module itself is shared)
  instantiate: () => { const rt = QuickJS.newRuntime(); const c = rt.newContext(); c.dispose(); rt.dispose(); },
  fresh: () => {
    const rt = QuickJS.newRuntime();
    const c = rt.newContext();
    const v = c.dump(c.unwrapResult(c.evalCode(CODE)));
    c.dispose(); rt.dispose();
    return v;
  },
  reused: () => { const h = emReused.unwrapResult(emReused.evalCode(CODE)); const v = emReused.dump(h); h.dispose(); return v; },
};

function timeoutOvershoot(ms) {
  const s = Date.now();
  try { vm.runInNewContext('while(true){}', {}, { timeout: ms }); } catch (e) { /* expected */ }
  return (Date.now() - s - ms) * 1000;
}

async function main() {
  try {
    const { getQuickJS } = require('quickjs-emscripten');
    QuickJS = await getQuickJS();
    emReused = QuickJS.newContext();
  } catch (e) {
    emscriptenSkip = 'quickjs-emscripten: not installed (npm ci --prefix bench/node); skipped';
  }
  const lines = readline.createInterface({ input: process.stdin });
  console.log(JSON.stringify({ ready: true, node: process.version, emscripten: emscriptenSkip }));
  for await (const line of lines) {
    const req = JSON.parse(line);
    let answer;
    if (req.work === 'timeout') {
      answer = { us: timeoutOvershoot(req.ms || 200) };
    } else if (req.engine === 'emscripten') {
      answer = emscriptenSkip ? { skip: emscriptenSkip } : { us: median(emWork[req.work], req.n) };
    } else {
      const us = median(nodeWork[req.work], req.n);
      answer = { us: req.work === 'host' ? us / 1000 : us };
    }
    console.log(JSON.stringify(answer));
  }
}

main();
