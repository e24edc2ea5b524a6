// QuickJS-NG's native atob throws InvalidCharacterError when called with no argument, where
// Web IDL requires a TypeError for a missing argument; core-js keeps that native function
// because it does throw. Wrap whichever of the two misbehaves; leave correct ones alone.
for (const name of ["atob", "btoa"]) {
  const native = globalThis[name];
  if (typeof native !== "function") continue;
  let missingArgumentIsTypeError = false;
  try {
    native();
  } catch (error) {
    missingArgumentIsTypeError = error instanceof TypeError;
  }
  if (missingArgumentIsTypeError) continue;
  const wrapped = {
    [name](data) {
      if (arguments.length === 0) {
        throw new TypeError(`${name}: 1 argument required, but only 0 present`);
      }
      return native(data);
    },
  }[name];
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, name);
  Object.defineProperty(globalThis, name, { ...descriptor, value: wrapped });
}
