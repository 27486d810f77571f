"""Every ```python block in the READMEs and the docs runs as written, as installed.

Each block runs alone as a script, in a process of its own (a scratch working directory, its
own session, a timeout), so a block must be self-contained. The process is forked from a runner
in the block's environment that has imported FastAPI and the other third-party modules the
examples use, but none of our packages (example_runner.py): importing FastAPI afresh cost each
block half a second of CPU. It runs in
``.venv-docs``, which holds only what getting started tells a user to install
(tests/docs/environments.py), plus the packages a ``pip install`` line in the
block's own section names before it: an example that needs more says so where
it is shown. A block that cannot run here (it starts a server, needs another
machine) is marked by an HTML comment on the line before its fence and is only
compiled:

    <!-- no-run -->
    ```python
    uvicorn.run(app, http=Protocol)
    ```
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs.environments import environment
from tests.paths import ROOT

DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "uvicorn_keepalive" / "README.md",
    ROOT / "orjson_dispatch" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
NO_RUN = "<!-- no-run -->"
PYTHON_INFO = {"python", "py", "python3"}
SHELL_INFO = {"bash", "console", "sh", "shell"}
#: The documented install (tests/docs/environments.py): not extras when a section names them.
DOCUMENTED = {"uvicorn-keepalive", "orjson-dispatch", "httpx2"}
VALUE_OPTIONS = {"-f", "--find-links", "-i", "--index-url", "--extra-index-url", "-c", "--python"}
TIMEOUT = 60

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Example:
    """One fenced Python block of a Markdown document."""

    source: str  # path relative to the repository root
    line: int  # line of the opening fence, 1-based
    code: str
    run: bool  # False when marked <!-- no-run -->
    extras: tuple[str, ...] = ()  # what its section says to pip install beyond the documented

    @property
    def id(self) -> str:
        return f"{self.source}:{self.line}"


def also_installed(shell: str) -> list[str]:
    """The packages the ``pip install`` lines of a shell block name beyond the documented install.

    Our own distributions (a folder or a name, with the extras the documented install has) are
    part of it; options and their values are not packages.
    """
    found = []
    for line in shell.splitlines():
        words = [w.strip("'\"") for w in line.split(" #", 1)[0].removeprefix("$ ").split()]
        if words[:2] != ["pip", "install"]:
            continue
        after_option = [w.startswith("-") and w in VALUE_OPTIONS for w in words]
        packages = [w for i, w in enumerate(words) if i > 1 and not w.startswith("-")
                    and not after_option[i - 1] and w != "\\"]  # fmt: skip
        found += [p for p in packages if "/" not in p and p.split("[")[0] not in DOCUMENTED]
    return found


def extract(source: str, text: str) -> list[Example]:
    """Every fenced block whose info string starts with python, py or python3."""
    examples = []
    lines = text.splitlines()
    previous = ""  # the last non-blank line outside a block
    extras: list[str] = []  # what the current section says to install
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            if lines[index].strip():
                previous = lines[index].strip()
            if lines[index].startswith("#"):
                extras = []
            index += 1
            continue
        fence, indent = opening["fence"], opening["indent"]
        language = (opening["info"].split() or [""])[0].lstrip("{.").rstrip("}")
        body = []
        index += 1
        # A block ends at a fence of the same character, at least as long, with no info.
        while index < len(lines):
            stripped = lines[index].strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                break
            body.append(lines[index].removeprefix(indent))
            index += 1
        if language in PYTHON_INFO:
            code = textwrap.dedent("\n".join(body)) + "\n"
            run = previous != NO_RUN
            examples.append(Example(source, index - len(body), code, run, tuple(extras)))
        elif language in SHELL_INFO:
            extras += also_installed(textwrap.dedent("\n".join(body)))
        previous = ""
        index += 1
    return examples


def collect() -> list[Example]:
    examples = []
    for path in DOCUMENTS:
        if path.is_file():
            examples += extract(str(path.relative_to(ROOT)), path.read_text())
    return examples


EXAMPLES = collect()


@dataclass(frozen=True)
class Outcome:
    returncode: int
    output: str


class Runner:
    """example_runner.py in one interpreter: it runs each script in a process of its own."""

    def __init__(self, python: Path) -> None:
        self.process = subprocess.Popen(
            [str(python), str(Path(__file__).with_name("example_runner.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, script: Path) -> Outcome:
        """Run ``script`` in its directory; its output is standard output, then standard error."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        with tempfile.TemporaryDirectory() as scratch:
            out, err = Path(scratch, "stdout"), Path(scratch, "stderr")
            self.process.stdin.write(json.dumps([str(script), str(out), str(err)]) + "\n")
            self.process.stdin.flush()
            pid = json.loads(self.process.stdout.readline())["pid"]
            timed_out = threading.Event()

            def kill() -> None:
                timed_out.set()
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.killpg(pid, signal.SIGKILL)

            timer = threading.Timer(TIMEOUT, kill)
            timer.start()
            try:
                status = json.loads(self.process.stdout.readline())["status"]
            finally:
                timer.cancel()
            if timed_out.is_set():
                return Outcome(-1, f"still running after {TIMEOUT} s (mark it {NO_RUN}?)")
            return Outcome(status, out.read_text() + err.read_text())

    def close(self) -> None:
        """End the runner (it ends at the end of its input)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(TIMEOUT)


_RUNNERS: dict[Path, Runner] = {}


@pytest.fixture(autouse=True, scope="module")
def _close_runners() -> Iterator[None]:
    yield
    while _RUNNERS:
        _RUNNERS.popitem()[1].close()


def run_example(example: Example, workdir: Path, python: Path | None = None) -> Outcome:
    """Run one example as a script in ``workdir``, with ``python`` (else this interpreter)."""
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "example.py"
    script.write_text(example.code)
    interpreter = python or Path(sys.executable)
    if interpreter not in _RUNNERS:
        _RUNNERS[interpreter] = Runner(interpreter)
    return _RUNNERS[interpreter].run(script)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_example_compiles(example: Example) -> None:
    compile(example.code, example.id, "exec")


@pytest.mark.timeout(600)  # the first example of an environment makes it
@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.run], ids=lambda e: e.id)
def test_example_runs_as_installed(example: Example, tmp_path: Path) -> None:
    outcome = run_example(example, tmp_path, environment(example.extras))
    assert outcome.returncode == 0, f"{example.id} failed:\n{example.code}\n{outcome.output}"


def test_the_readme_has_runnable_examples() -> None:
    assert any(e.source == "README.md" and e.run for e in EXAMPLES)


# The mechanism itself: extraction, the no-run marker, and failure detection.

SAMPLE = """\
# Title

```bash
echo not python
```

```python
print("runs")
```

<!-- no-run -->
```py
serve_forever()
```

!!! note
    ```python title="indented.py"
    if True:
        print("inside an admonition")
    ```

````markdown
```python
print("quoted inside another block: not an example")
```
````

~~~python
print("tilde fence")
~~~
"""


def test_extract_finds_python_blocks_only() -> None:
    examples = extract("sample.md", SAMPLE)
    assert [(e.line, e.run) for e in examples] == [(7, True), (12, False), (17, True), (28, True)]
    assert examples[0].code == 'print("runs")\n'
    assert examples[2].code == 'if True:\n    print("inside an admonition")\n'
    assert examples[3].code == 'print("tilde fence")\n'


def test_a_failing_example_is_reported(tmp_path: Path) -> None:
    example = Example("sample.md", 1, "raise SystemExit('broken example')\n", run=True)
    outcome = run_example(example, tmp_path)
    assert outcome.returncode == 1
    assert "broken example" in outcome.output


def test_a_passing_example_runs_as_a_script_in_a_process_of_its_own(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "assert 'pytest' not in sys.modules and 'orjson_dispatch' not in sys.modules\n"
        "assert __name__ == '__main__' and sys.argv == [__file__] and sys.path[0] == os.getcwd()\n"
        "print(os.getcwd(), os.getsid(0) == os.getpid())\n"
    )
    outcome = run_example(Example("sample.md", 1, code, run=True), tmp_path)
    assert outcome == Outcome(0, f"{tmp_path} True\n")


def test_an_example_ends_as_a_script_ends(tmp_path: Path) -> None:
    # Its threads are joined (this one waits for the main thread to end), then its exit
    # handlers run, and its SystemExit is the exit status.
    code = (
        "import atexit, sys, threading\n"
        "atexit.register(print, 'exit handler')\n"
        "main = threading.main_thread()\n"
        "threading.Thread(target=lambda: (main.join(), print('thread'))).start()\n"
        "sys.exit(3)\n"
    )
    outcome = run_example(Example("sample.md", 1, code, run=True), tmp_path)
    assert outcome == Outcome(3, "thread\nexit handler\n")


def test_an_example_still_running_at_the_timeout_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "TIMEOUT", 0.5)
    forever = Example("sample.md", 1, "import threading\nthreading.Event().wait()\n", run=True)
    outcome = run_example(forever, tmp_path)
    assert outcome.returncode == -1
    assert "still running" in outcome.output


def test_an_example_gets_what_its_section_says_to_install() -> None:
    text = (
        "## Client\n\n```bash\npip install 'openai>=3' ./orjson_dispatch httpx2  # the client\n"
        "pip install --find-links dist uvicorn-keepalive\n```\n\n```python\nimport openai\n```\n\n"
        "## Next\n\n```python\nprint()\n```\n"
    )
    assert [e.extras for e in extract("sample.md", text)] == [("openai>=3",), ()]


def test_the_docs_environment_holds_only_the_documented_install(tmp_path: Path) -> None:
    code = (
        "import importlib.util as u\n"
        "print([m for m in ('httpx', 'openai', 'pytest') if u.find_spec(m)])\n"
        "import fastapi, httpx2, orjson_dispatch, uvicorn_keepalive\n"
    )
    outcome = run_example(Example("sample.md", 1, code, run=True), tmp_path, environment())
    assert outcome == Outcome(0, "[]\n")
