# Helpers for the tests that drive Agently's own providers (sourced after
# common.sh). Agently is a test subject, never part of the repo: CI has
# ../shared beside the clone, a developer may point AGENTLY_SRC elsewhere.
AGENTLY_SRC=${AGENTLY_SRC:-$AGSBX_SOURCE_DIR/../shared/thirdparty/agently}

# Skips (a failure under AGSBX_REQUIRE_MECHANISMS=1) without the checkout,
# the test user or Debian's python3 with typing_extensions.
agently_require_src() {
  [[ -f $AGENTLY_SRC/agently/types/data/code_execution.py ]] \
    || skip "agently" 1 "no Agently checkout at $AGENTLY_SRC (CI has ../shared/thirdparty/agently)"
  have_test_user || skip "agently" 1 "needs root and the test user $AGSBX_TEST_USER"
  /usr/bin/python3 -c 'import typing_extensions' 2>/dev/null \
    || skip "agently" 1 "python3-typing-extensions missing (workflows/install-deps.sh --test)"
}

# Stages, world-readable, the layout the acceptance command expects:
# <stage>/src/{agsbx-evidence and helpers, providers/external/agently/,
# tests/cli/lib-agently-drive.py} and <stage>/shared/thirdparty/agently, so
# `cd <stage>/src && python3 providers/... --agently-src ../shared/...` works
# for the unprivileged user wherever the clone lives. Prints <stage>.
agently_stage() {
  local s
  s=$(t_tmpdir agently)
  local bin
  bin=$(t_stage_for_user)
  mkdir -p "$s/src/providers/external/agently" "$s/src/tests/cli" "$s/shared/thirdparty"
  cp -a "$bin"/. "$s/src/"
  cp "$bin/agsbx-payload" "$s/agsbx-payload"
  install -m 0755 "$AGSBX_SOURCE_DIR/providers/external/agently/agently-adapter.py" "$s/src/providers/external/agently/"
  install -m 0755 "$AGSBX_SOURCE_DIR/tests/cli/lib-agently-drive.py" "$s/src/tests/cli/"
  cp -r "$AGENTLY_SRC" "$s/shared/thirdparty/agently"
  chmod -R a+rX "$s"
  echo "$s"
}
