# Sourced by the Python suites' run.sh: `python_venv NAME REQUIREMENTS` makes .build/NAME-venv
# with the pinned tools of REQUIREMENTS (again when that file changes) and prints its path.
python_venv() {
    local venv=.build/$1-venv requirements=$2
    if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$venv/requirements.txt"; then
        python3 -m venv "$venv" >&2
        "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements" >&2
        cp "$requirements" "$venv/requirements.txt"
    fi
    echo "$venv"
}
