// console (captured into CallResult.logs) and timers on a virtual clock.
  // ---- console ----
  let logsOpen = true;
  const show = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof _Error) return `${v.name}: ${v.message}`;
    if (typeof v === "object" && v !== null) {
      try {
        const s = jsonStringify(v);
        if (s !== undefined) return s;
      } catch {}
    }
    try {
      return String(v);
    } catch {
      return Object.prototype.toString.call(v);
    }
  };
  const logger = (level) =>
    function (...args) {
      if (!logsOpen) return;
      // raw protocol (no JSON): "level\ntext" -> "1" while the log has room
      logsOpen = host("log", `${level}\n${args.map(show).join(" ")}`) === "1";
    };
  define("console", {
    log: logger("log"),
    info: logger("info"),
    warn: logger("warn"),
    error: logger("error"),
    debug: logger("debug"),
  });

  // ---- timers: a virtual clock run by the guest's job loop ----
  let clock = 0;
  let timerSeq = 0;
  const timers = new Map(); // id -> {due, fn, args, every}
  const addTimer = (fn, ms, args, repeat) => {
    if (typeof fn !== "function") throw new _TypeError("setTimeout: the callback must be a function");
    const delay = Math.max(0, Number(ms) || 0);
    const id = ++timerSeq;
    timers.set(id, { due: clock + delay, fn, args, every: repeat ? Math.max(1, delay) : 0 });
    return id;
  };
  define("setTimeout", (fn, ms, ...args) => addTimer(fn, ms, args, false));
  define("setInterval", (fn, ms, ...args) => addTimer(fn, ms, args, true));
  define("clearTimeout", (id) => void timers.delete(id));
  define("clearInterval", (id) => void timers.delete(id));
  define("queueMicrotask", (fn) => void _Promise.resolve().then(fn));
  const tick = (budgetMs) => {
    let nextId = 0;
    let next = null;
    for (const [id, t] of timers) {
      if (next === null || t.due < next.due) {
        next = t;
        nextId = id;
      }
    }
    if (next === null) return 0;
    if (next.due > budgetMs) return 2;
    clock = next.due;
    if (next.every) next.due += next.every;
    else timers.delete(nextId);
    try {
      next.fn(...next.args);
    } catch (e) {
      G.console.error("uncaught in timer:", e);
    }
    return 1;
  };
