#!/usr/bin/env bash
# The files of src/tl stand on floors (docs/adr/0009-layering.md): no two
# of them call each other's functions, directly or through other files of
# src/tl. Read from the object files' symbols (nm): a file calls another
# when it has an undefined symbol that the other defines. Prints the
# floors; fails naming the files of a loop and the calls that tie them.
# Usage: tl_layers.sh [OBJECT_DIR] (default: the build's src/tl objects).
set -euo pipefail
dir=${1:-}
if [ -z "$dir" ]; then
        build=${CUBESIM_BUILD_DIR:?}
        dir=$(find "$build" -path '*/cubesim_objs.dir/src/tl' -type d | head -n 1)
fi
[ -n "$dir" ] && [ -d "$dir" ] || { echo "FAIL: no object directory of src/tl"; exit 1; }
python3 - "$dir" <<'PY'
import glob, os, subprocess, sys

objs = sorted(glob.glob(os.path.join(sys.argv[1], '*.o')))
if len(objs) < 2:
    sys.exit(f'FAIL: {len(objs)} object files under {sys.argv[1]}')
defs, undef = {}, {}
for o in objs:
    f = os.path.basename(o)[:-len('.c.o')] + '.c'
    out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
    defs[f], undef[f] = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == 'U':
            undef[f].add(p[1])
        elif len(p) == 3 and p[1] in 'TDBRGSVW':
            defs[f].add(p[2])
owner = {s: f for f, ss in defs.items() for s in ss}
calls = {f: {} for f in defs}          # f -> {g: [symbols f takes from g]}
for f, us in undef.items():
    for s in us:
        g = owner.get(s)
        if g and g != f:
            calls[f].setdefault(g, []).append(s)

# A loop: a file that reaches itself through the calls.
def path(a, b):
    seen, todo = {a: None}, [a]
    while todo:
        x = todo.pop()
        for y in calls[x]:
            if y not in seen:
                seen[y] = x
                todo.append(y)
    if b not in seen:
        return None
    p = [b]
    while p[-1] != a:
        p.append(seen[p[-1]])
    return p[::-1]

for f in sorted(calls):
    for g in sorted(calls[f]):
        back = path(g, f)
        if back:
            loop = [f] + back
            print('FAIL: a loop among the files of src/tl: ' + ' -> '.join(loop))
            for a, b in zip(loop, loop[1:]):
                print(f'  {a} -> {b}: {", ".join(sorted(calls[a][b])[:6])}')
            sys.exit(1)

floor = {}
def floor_of(f):
    if f not in floor:
        floor[f] = 1 + max((floor_of(g) for g in calls[f]), default=0)
    return floor[f]
for f in calls:
    floor_of(f)
for n in sorted(set(floor.values()), reverse=True):
    print(f'floor {n}: ' + ' '.join(sorted(f for f in floor if floor[f] == n)))
print(f'src/tl: {len(calls)} files on {max(floor.values())} floors, no loop')
PY
