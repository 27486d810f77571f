"""Every ```python block in the READMEs and the docs runs as written.

Each block runs alone in a fresh interpreter (its own subprocess, a scratch
working directory, a timeout), so a block must be self-contained. A block
that cannot run here (it starts a server, needs another machine) is marked by
an HTML comment on the line before its fence and is only compiled:

    <!-- no-run -->
    ```python
    uvicorn.run(app, http=Protocol)
    ```
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "uvicorn_keepalive" / "README.md",
    ROOT / "orjson_dispatch" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
NO_RUN = "<!-- no-run -->"
PYTHON_INFO = {"python", "py", "python3"}
TIMEOUT = 60

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Example:
    """One fenced Python block of a Markdown document."""

    source: str  # path relative to the repository root
    line: int  # line of the opening fence, 1-based
    code: str
    run: bool  # False when marked <!-- no-run -->

    @property
    def id(self) -> str:
        return f"{self.source}:{self.line}"


def extract(source: str, text: str) -> list[Example]:
    """Every fenced block whose info string starts with python, py or python3."""
    examples = []
    lines = text.splitlines()
    previous = ""  # the last non-blank line outside a block
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            if lines[index].strip():
                previous = lines[index].strip()
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
            examples.append(Example(source, index - len(body), code, run=previous != NO_RUN))
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


def run_example(example: Example, workdir: Path) -> Outcome:
    """Run one example in a fresh interpreter with ``workdir`` as its working directory."""
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "example.py"
    script.write_text(example.code)
    try:
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome(-1, f"still running after {TIMEOUT} s (mark it {NO_RUN}?)")
    return Outcome(done.returncode, done.stdout + done.stderr)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Run every runnable example once, two at a time."""
    base = tmp_path_factory.mktemp("examples")
    runnable = [e for e in EXAMPLES if e.run]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            e.id: pool.submit(run_example, e, base / re.sub(r"\W", "_", e.id)) for e in runnable
        }
        yield {example_id: future.result() for example_id, future in futures.items()}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_example_compiles(example: Example) -> None:
    compile(example.code, example.id, "exec")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.run], ids=lambda e: e.id)
def test_example_runs(example: Example, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[example.id]
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


def test_a_passing_example_runs_in_a_fresh_interpreter(tmp_path: Path) -> None:
    code = "import sys, os; assert 'pytest' not in sys.modules; print(os.getcwd())\n"
    outcome = run_example(Example("sample.md", 1, code, run=True), tmp_path)
    assert outcome == Outcome(0, f"{tmp_path}\n")
