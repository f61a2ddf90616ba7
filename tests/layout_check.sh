#!/usr/bin/env bash
# tests/layout_check.sh ROOT: the include arrows of docs/architecture.md ("Who may include whom"),
# checked over the source tree at ROOT. Arrows run down:
#   cli/  ->  coordinator/  ->  read/  ->  the store (coordinator/sw_store.h)  ->  common/
#   cli/  ->  worker/  ->  common/;          pipeline/  ->  common/
# A header belongs to the folder it lives in; an include the tree does not hold (a system or
# generated header) is not judged. Libraries (every folder but cli/) never parse argv: no getopt,
# optarg, optind or argc parameter. Prints each violation and exits 1; 0 when there is none.
set -u
root=${1:?usage: layout_check.sh ROOT}
cd "$root" || exit 2
folders="common worker coordinator read cli pipeline"

# May files of folder $1 include headers of folder $2 (header basename $3)?
allowed() {
  local from=$1 to=$2 h=$3
  [ "$from" = "$to" ] && return 0
  case "$from:$to" in
    cli:*) return 0 ;;
    coordinator:common | coordinator:read) return 0 ;;
    read:common) return 0 ;;
    read:coordinator) [ "$h" = sw_store.h ] && return 0 ;;
    worker:common | pipeline:common) return 0 ;;
  esac
  return 1
}

declare -A owner
for d in $folders; do
  [ -d "$d" ] || continue
  while IFS= read -r h; do
    b=${h##*/}
    if [ -n "${owner[$b]:-}" ] && [ "${owner[$b]}" != "$d" ]; then
      echo "layout: header name $b is in both ${owner[$b]}/ and $d/" >&2
      bad=1
    fi
    owner[$b]=$d
  done < <(find "$d" -name '*.h' -not -path '*/build*')
done

bad=${bad:-0}
for d in $folders; do
  [ -d "$d" ] || continue
  while IFS= read -r f; do
    while IFS=: read -r line inc; do
      h=${inc#*\"}
      h=${h%%\"*}
      h=${h##*/}
      to=${owner[$h]:-}
      [ -n "$to" ] || continue
      if ! allowed "$d" "$to" "$h"; then
        echo "layout: $f:$line includes $to/$h: $d/ may not include $to/ (docs/architecture.md)" >&2
        bad=1
      fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
    if [ "$d" != cli ] && [ "$d" != pipeline ]; then
      while IFS= read -r hit; do
        echo "layout: $f:$hit: a library parses argv (that belongs in cli/)" >&2
        bad=1
      done < <(grep -nE '\bgetopt(_long)?\b|\boptarg\b|\boptind\b|\bint \*?argc\b' "$f")
    fi
  done < <(find "$d" \( -name '*.c' -o -name '*.h' \) -not -path '*/build*')
done
[ "$bad" -eq 0 ] && echo "layout: every include runs down, no library parses argv"
exit "$bad"
