#!/usr/bin/env bash
# tests/layout_check_catches.sh CHECK: runs the layout check (tests/layout_check.sh) on small trees
# that each break one rule, and fails unless the check refuses every one of them and accepts
# the tree that breaks none.
set -u
check=${1:?usage: layout_check_catches.sh LAYOUT_CHECK}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0

# tree NAME: a fresh tree with one header per folder and files that follow every rule.
tree() {
  local r=$t/$1
  mkdir -p "$r"/{common,worker,coordinator,read,cli,pipeline}
  echo '#include "sw_err.h"' >"$r/common/sw_err.h"
  echo '#include "sw_err.h"' >"$r/worker/sw_worker.h"
  echo '#include "sw_err.h"' >"$r/coordinator/sw_store.h"
  echo '#include "sw_store.h"' >"$r/coordinator/sw_sched.h"
  printf '#include "sw_store.h"\n#include "sw_err.h"\n' >"$r/read/sw_report.h"
  printf '#include "sw_report.h"\n#include "sw_sched.h"\n' >"$r/coordinator/sw_coord.c"
  printf '#include "sw_coord.h"\n#include "sw_worker.h"\nint main(int argc, char **argv);\n' \
    >"$r/cli/splatsweep.c"
  echo '#include "sw_err.h"' >"$r/pipeline/gs_vk.h"
  echo "$r"
}
# expect NAME WANT: the check's exit status on tree NAME must be WANT (0 or 1).
expect() {
  bash "$check" "$t/$1" >/dev/null 2>"$t/$1.err"
  local got=$?
  if [ "$got" -ne "$2" ]; then
    echo "layout_check on '$1': exit $got, expected $2" >&2
    cat "$t/$1.err" >&2
    fail=1
  fi
}

tree clean >/dev/null
expect clean 0
r=$(tree coord_worker) && echo '#include "sw_worker.h"' >>"$r/coordinator/sw_coord.c"
expect coord_worker 1
r=$(tree read_sched) && echo '#include "sw_sched.h"' >>"$r/read/sw_report.h"
expect read_sched 1
r=$(tree common_up) && echo '#include "sw_store.h"' >>"$r/common/sw_err.h"
expect common_up 1
r=$(tree lib_argv) && echo 'int sw_x_cli(int argc, char **argv);' >>"$r/read/sw_report.h"
expect lib_argv 1
r=$(tree getopt) && echo 'static int f(void) { return getopt_long(0, 0, 0, 0, 0); }' \
  >>"$r/coordinator/sw_coord.c"
expect getopt 1
r=$(tree pipe_sweep) && echo '#include "sw_store.h"' >>"$r/pipeline/gs_vk.h"
expect pipe_sweep 1
r=$(tree into_cli) && echo '#include "sw_cmd.h"' >>"$r/coordinator/sw_coord.c" &&
  echo '' >"$r/cli/sw_cmd.h"
expect into_cli 1
[ "$fail" -eq 0 ] && echo "layout_check refuses each broken tree and accepts the clean one"
exit "$fail"
