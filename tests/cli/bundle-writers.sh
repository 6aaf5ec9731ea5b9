#!/usr/bin/env bash
# evidence/ writes the bundle (evidence/bundle.h): no file in cli/ or
# conformance/ sets a member of the bundle's top level or of a provider
# record; they hand facts to evidence/'s setters and builders instead.
#
# The check is a scan of the sources, like layering.sh: a jansson setter
# (json_object_set, _set_new, _nocheck variants) whose key is a string
# literal naming such a member, or any json_object_update (it merges
# members wholesale), is a violation. Two things are not:
#  - a check's facts (the target names "facts"): check records stay built
#    in conformance/, through evidence/'s builders (agsbx_bundle_check);
#  - the files listed in `own_documents`, which write their command's own
#    JSON output, not a bundle.
# Limits (said so that nobody relies on more): a key spelled through a
# variable or on the next line, and json_pack'ed records, are not seen; the
# builders' interfaces (struct agsbx_provider_record, the setters) are what
# keeps those in evidence/.
#
# Usage: bundle-writers.sh               self-test, then this repository
#        bundle-writers.sh SOURCE_ROOT   that tree only
# The self-test proves the check fails on a temp copy with one forbidden
# setter per kind (a check that cannot fail proves nothing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# The top level (schemas/evidence-bundle.schema.json) and a provider
# record's members.
top='schema|tool|created_at|challenge|subject|attachments|host|context|providers|timings|summary|signature'
provider='id|verdict|reason|probe|claims|observed|underclaim|failing_checks|checks|confinement|config'
# Files whose JSON is their own command's output, never a bundle.
own_documents='cli/cmd-providers.c cli/cmd-bench.c cli/cmd-cleanup.c cli/cmd-diff.c'

# Prints one line per violation below $1; returns 1 if any.
check_tree() {
  local src=$1
  (cd "$src" && find cli conformance -name '*.[ch]' -print0 2>/dev/null | sort -z |
     xargs -0 perl -ne '
       BEGIN { %own = map { $_ => 1 } split / /, $ENV{OWN}; $bad = 0 }
       if ($own{$ARGV}) { close ARGV if eof; next }
       if (/json_object_set(?:_new)?(?:_nocheck)?\s*\(\s*([^,]*?)\s*,\s*"($ENV{TOP}|$ENV{PROVIDER})"/ &&
           $1 !~ /facts/) {
         print "bundle-writers: $ARGV:$.: sets bundle member \"$2\" outside evidence/\n"; $bad = 1;
       }
       if (/json_object_update\w*\s*\(/) {
         print "bundle-writers: $ARGV:$.: merges members into a record outside evidence/\n"; $bad = 1;
       }
       close ARGV if eof;
       END { exit $bad }')
}
export OWN="$own_documents" TOP="$top" PROVIDER="$provider"

if [[ $# -eq 0 ]]; then
  tmp=$(mktemp -d /tmp/agsbx-bundle-writers.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  cp -r "$root/cli" "$root/conformance" "$tmp/"
  out=$(check_tree "$tmp") || { echo "$out"; echo "FAIL: the unchanged copy already fails" >&2; exit 1; }
  # One forbidden write per kind: a top-level member from cli/, a provider
  # record member from conformance/, a merge; a check's facts stay allowed.
  for bad in 'cli/cmd-collect.c:json_object_set_new(bundle, "timings", json_object());' \
             'conformance/matrix.c:json_object_set(pj, "reason", json_string("x"));' \
             'conformance/matrix.c:json_object_update(pj, declared);'; do
    f=${bad%%:*} line=${bad#*:}
    cp "$tmp/$f" "$tmp/$f.orig"
    printf 'static void injected(json_t *bundle, json_t *pj, json_t *declared) { %s }\n' "$line" >>"$tmp/$f"
    if out=$(check_tree "$tmp"); then
      echo "FAIL: '$line' in $f was not caught" >&2
      exit 1
    fi
    grep -q "^bundle-writers: $f:[0-9]*: " <<<"$out" || { echo "FAIL: wrong report: $out" >&2; exit 1; }
    mv "$tmp/$f.orig" "$tmp/$f"
  done
  printf 'static void facts_ok(json_t *out) { json_object_set_new(out->facts, "reason", json_null()); }\n' \
    >>"$tmp/conformance/matrix.c"
  out=$(check_tree "$tmp") || { echo "FAIL: a check's facts were taken for a bundle member: $out" >&2; exit 1; }
  echo "ok - a bundle member set outside evidence/ (top level, provider record, merge) fails the check"
fi

src=${1:-$root}
if ! check_tree "$src"; then
  echo "FAIL: cli/ or conformance/ writes bundle members; use evidence/'s setters (evidence/bundle.h)" >&2
  exit 1
fi
echo "ok - no file outside evidence/ sets a bundle top-level or provider record member"
