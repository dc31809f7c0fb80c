#!/usr/bin/env bash
# The example user kernel builds against tl.h alone, loads with --kernels,
# runs in both modes and computes alpha * x + y.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -fstack-clash-protection -I "$src/include" \
        "$src/examples/user_kernel/axpy.c" -o "$tmp/libaxpy.so"
# (The listing is read whole first: grep -q leaving early would end the
# writer with SIGPIPE, a failure under pipefail once the list outgrows a
# stdio buffer.)
listing=$("$bin" kernels --kernels "$tmp/libaxpy.so")
grep -q "^axpy$" <<<"$listing"
"$bin" run axpy --kernels "$tmp/libaxpy.so" --set n=1000 --set chunk=100 >/dev/null
"$bin" run axpy --kernels "$tmp/libaxpy.so" --set n=1000 --set chunk=100 --set alpha=3 \
        --mode data --outputs "$tmp/out" >/dev/null
test -s "$tmp/out/out.npy"
# A library built before the setup calls became macros (calling them by
# their own names, with no file:line) still loads and runs.
cat >"$tmp/old_abi.h" <<'EOF'
#include <cubesim/tl.h>
#undef tl_setup_tensor
#undef tl_setup_tensor_sharded
#undef tl_setup_replicate
#undef tl_setup_shard
#undef tl_setup_interleave
tl_tensor *tl_setup_tensor(tl_setup *, const char *, tl_io, tl_dtype, int, const int64_t *);
tl_tensor *tl_setup_tensor_sharded(tl_setup *, const char *, tl_io, tl_dtype, int, const int64_t *);
void tl_setup_replicate(tl_setup *, tl_tensor *);
void tl_setup_shard(tl_setup *, tl_tensor *, int, int64_t);
void tl_setup_interleave(tl_setup *, tl_tensor *);
EOF
cc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I "$src/include" -include "$tmp/old_abi.h" \
        "$src/examples/user_kernel/axpy.c" -o "$tmp/libaxpy_old.so"
nm -D --undefined-only "$tmp/libaxpy_old.so" | grep -w tl_setup_interleave >/dev/null
"$bin" run axpy --kernels "$tmp/libaxpy_old.so" --set n=1000 --set chunk=100 --set alpha=3 --mode data \
        --outputs "$tmp/out_old" >/dev/null
cmp "$tmp/out/out.npy" "$tmp/out_old/out.npy"
# A library without the symbol is a clear error, exit 2.
cc -shared -fPIC -x c - -o "$tmp/libempty.so" <<<'int nothing_here;'
set +e
msg=$("$bin" run axpy --kernels "$tmp/libempty.so" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc: $msg"; exit 1; }
grep -q "no symbol 'cubesim_kernels'" <<<"$msg" || { echo "unexpected message: $msg"; exit 1; }
# The binary exports the kernel API and the run API (cubesim.h) and nothing
# else of the simulator: a
# library that calls an engine internal does not load.
# (Functions only: the data symbols are the C library's and MPI's copies.)
api=$(grep -ohE '\b(tl_?_?|cubesim_)[a-z0-9_]+\(' "$src/include/cubesim/tl.h" \
        "$src/include/cubesim/cubesim.h" | tr -d '(' | sort -u)
extra=$(nm -D --defined-only "$bin" | awk '$2 == "T" && $3 != "_start" {print $3}' |
        grep -vxF "$api" || true)
[ -z "$extra" ] || { echo "exported beyond the kernel API:"; echo "$extra"; exit 1; }
# ...and every function tl.h declares is exported (declared TL_API).
decl=$(grep -E '^[A-Za-z]' "$src/include/cubesim/tl.h" | grep -vE '^(typedef|struct|extern)' |
        grep -oE '\btl_?_?[a-z0-9_]+\(' | tr -d '(' | sort -u)
missing=$(nm -D --defined-only "$bin" | awk '$2 == "T" {print $3}' | grep -xvF -f - <(echo "$decl") ||
        true)
[ -z "$missing" ] || { echo "kernel API not exported (TL_API missing):"; echo "$missing"; exit 1; }
# libcubesim.so exports the same two APIs and nothing else, functions and
# data alike, and every function cubesim.h declares.
lib=${CUBESIM_BUILD_DIR:?}/libcubesim.so
extra=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -vxF "$api" || true)
[ -z "$extra" ] || { echo "libcubesim.so exports beyond its APIs:"; echo "$extra"; exit 1; }
decl=$(grep -oE '\bcubesim_[a-z0-9_]+\(' "$src/include/cubesim/cubesim.h" | tr -d '(' | sort -u)
missing=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -xvF -f - <(echo "$decl") || true)
[ -z "$missing" ] || { echo "libcubesim.so does not export:"; echo "$missing"; exit 1; }
# The double-underscore prefix is private: the exported entry points behind
# tl.h's macros are tl_impl_*, and the old tl__ spellings are only aliases.
priv=$(nm -D --defined-only "$bin" "$lib" | awk '{print $3}' | grep -E '^tl__' || true)
[ -z "$priv" ] || { echo "exported under the private prefix tl__:"; echo "$priv"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I "$src/include" -x c - <<'EOF'
#include <cubesim/tl.h>
int old_spelling(tl_ctx *tl);
int old_spelling(tl_ctx *tl) { return tl__program_id(tl, 0, __FILE__, __LINE__); }
EOF
cc -shared -fPIC -x c - -o "$tmp/libinternal.so" <<'EOF'
struct ev_loop;
int ev_run(struct ev_loop *, void *);
int probe(void) { return ev_run(0, 0); }
const void *const cubesim_kernels[] = { 0 };
EOF
set +e
msg=$("$bin" kernels --kernels "$tmp/libinternal.so" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "a library using ev_run loaded: exit $rc: $msg"; exit 1; }
grep -q "undefined symbol: ev_run" <<<"$msg" || { echo "unexpected message: $msg"; exit 1; }
# A library kernel named like a built-in one (or like another of its own,
# or of an earlier library) is refused, naming the library and the kernel.
cat >"$tmp/shadow.c" <<'EOF'
#include <cubesim/tl.h>
static void body(tl_ctx *tl, const void *argp) { (void)tl; (void)argp; }
static const struct tl_kernel a = { .name = NAME_A, .fn = body };
static const struct tl_kernel b = { .name = NAME_B, .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &a, &b, NULL };
EOF
shadow() {  # shadow LIB NAME_A NAME_B
        cc -std=c11 -shared -fPIC -I "$src/include" -DNAME_A="\"$2\"" -DNAME_B="\"$3\"" \
                "$tmp/shadow.c" -o "$tmp/$1"
}
shadow libgemm.so mine gemm
shadow libtwice.so twin twin
shadow libmine.so mine other
expect_refused() {  # expect_refused MESSAGE ARGS...
        local want=$1 msg rc
        shift
        set +e
        msg=$("$bin" "$@" 2>&1); rc=$?
        set -e
        [ "$rc" -eq 2 ] || { echo "$*: exit $rc, want 2: $msg"; exit 1; }
        grep -qF "$want" <<<"$msg" || { echo "$*: unexpected message: $msg"; exit 1; }
}
expect_refused "$tmp/libgemm.so: error: kernel 'gemm' is already built in: a kernel library adds kernels, it cannot replace one; rename it" \
        run gemm --kernels "$tmp/libgemm.so"
expect_refused "$tmp/libtwice.so: error: kernel 'twin' is already exported by this library" \
        kernels --kernels "$tmp/libtwice.so"
expect_refused "$tmp/libgemm.so: error: kernel 'mine' is already loaded by an earlier --kernels" \
        run mine --kernels "$tmp/libmine.so" --kernels "$tmp/libgemm.so"
echo "user kernel: built, listed, ran in op_log and data mode; bad library rejected;" \
     "only the kernel API exported"
