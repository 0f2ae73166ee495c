/**
 * @module The Python modules code may use, and what each of them re-exports: for every allowed
 * module (and every module an allowed module loads itself), which attributes are themselves
 * modules. `random._os` is `os` and `typing.sys` is `sys`: the list is computed by the host's
 * python3 (the same one whose grammar parses), once per interpreter, in a bounded child that
 * imports only the allowed modules (and what they import themselves) and runs no code of any
 * argument.
 */
import { type PythonGuardOptions, runPython } from './python-child.js';

/** Modules code may import: computation only (no os, sys, subprocess, socket, io, importlib…). */
export const ALLOWED_MODULES: ReadonlySet<string> = new Set([
  'array',
  'base64',
  'binascii',
  'bisect',
  'calendar',
  'cmath',
  'collections',
  'copy',
  'dataclasses',
  'datetime',
  'decimal',
  'difflib',
  'enum',
  'fractions',
  'functools',
  'hashlib',
  'heapq',
  'hmac',
  'itertools',
  'json',
  'math',
  'pprint',
  'random',
  're',
  'statistics',
  'string',
  'textwrap',
  'typing',
  'unicodedata',
  'uuid',
]);

/** True when a dotted module name belongs to an allowed module (`json.decoder` to `json`). */
export function isAllowedModule(name: string): boolean {
  return ALLOWED_MODULES.has(name.split('.')[0] ?? name);
}

/** For each module: its attributes that are modules, each with that module's name. */
export type ModuleMap = ReadonlyMap<string, ReadonlyMap<string, string>>;

/**
 * Reads the allowed names on stdin; prints `{module: {attribute: module name}}` for the allowed
 * modules and the modules they load themselves (`json.decoder`, `collections.abc`). Submodules of
 * an allowed package count as attributes (`from json import tool` imports one) but are listed
 * only when the package loads them: the guard knows nothing of what the others re-export. A
 * module that does not import is left out, so nothing about it is taken as known.
 */
const INTROSPECT = `
import importlib, json, pkgutil, sys, types
allowed = set(json.loads(sys.stdin.read()))
out = {}
queue = sorted(allowed)
while queue:
    name = queue.pop()
    if name in out:
        continue
    try:
        m = importlib.import_module(name)
    except Exception:
        continue
    attrs = {}
    for a in dir(m):
        try:
            v = getattr(m, a)
        except Exception:
            continue
        if isinstance(v, types.ModuleType):
            attrs[a] = v.__name__
    for target in attrs.values():
        if target.split(".")[0] in allowed and target not in out:
            queue.append(target)
    # Submodules the package does not load itself are named but not listed: importing one is
    # refused, as is reading it (json.tool re-exports pathlib.Path).
    for info in pkgutil.iter_modules(getattr(m, "__path__", None) or []):
        attrs.setdefault(info.name, name + "." + info.name)
    out[name] = attrs
sys.stdout.write(json.dumps(out))
`;

const cache = new Map<string, Promise<ModuleMap | undefined>>();

/**
 * The module map of the interpreter in `options`; undefined when it cannot be computed (the
 * caller refuses the code: fail closed). Computed once per interpreter; a failure is not kept.
 */
export function moduleMap(options: PythonGuardOptions): Promise<ModuleMap | undefined> {
  const python = options.python ?? 'python3';
  const known = cache.get(python);
  if (known !== undefined) return known;
  const computing = computeModuleMap(options).then((map) => {
    if (map === undefined) cache.delete(python);
    return map;
  });
  cache.set(python, computing);
  return computing;
}

async function computeModuleMap(options: PythonGuardOptions): Promise<ModuleMap | undefined> {
  // Importing thirty modules takes longer than one parse: at least a few times its allowance.
  const timeoutMs = Math.max((options.timeoutMs ?? 0) * 4, 20_000);
  const answer = await runPython(INTROSPECT, JSON.stringify([...ALLOWED_MODULES]), {
    ...options,
    timeoutMs,
  });
  if ('failed' in answer) return undefined;
  const json = answer.json;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const map = new Map<string, ReadonlyMap<string, string>>();
  for (const [module, attrs] of Object.entries(json)) {
    if (typeof attrs !== 'object' || attrs === null || Array.isArray(attrs)) return undefined;
    const inner = new Map<string, string>();
    for (const [attr, target] of Object.entries(attrs)) {
      if (typeof target !== 'string') return undefined;
      inner.set(attr, target);
    }
    map.set(module, inner);
  }
  return map;
}
