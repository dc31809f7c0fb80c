# tests/lib/numpy.sh: sourced by the tests that check against a NumPy model.
# numpy_python: print a python3 that imports numpy (the first on PATH, else
# /usr/bin/python3, where scripts/deps.sh installs python3-numpy); fail
# with a message if there is none.
numpy_python() {
        local p
        for p in python3 /usr/bin/python3; do
                if "$p" -c 'import numpy' 2>/dev/null; then
                        echo "$p"
                        return 0
                fi
        done
        echo "FAIL: no python3 with numpy (run scripts/deps.sh)" >&2
        return 1
}
