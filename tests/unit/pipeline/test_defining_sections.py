"""Offline extracts of API references: the section headed by an API the question names (where the docs define it)
beats a passage naming every asked API in passing, and an example given twice (two module syntaxes) is quoted once."""

from __future__ import annotations

from tests.support.offline_answers import answer, quoted

RESOLVER = """## Name lookups

Every other function of the `resolver` module asks a server directly. They never read the hosts file that
`resolver.find()` reads, and they always use the network.

```js
resolver.ask('example.org', (err, addresses) => {
  console.log(resolver.find, addresses);
});
```

### `resolver.find()`

Internally, `resolver.find()` calls the system's name service in a blocking call. That call runs on the small
shared pool of helper threads, so a slow name server holds a thread that file reads also wait for.

### `resolver.ask()`

These functions send their queries over the network without the shared pool of helper threads.
"""


def test_the_section_headed_by_an_asked_api_is_quoted_before_a_passage_naming_both() -> None:
    text = answer("Why can resolver.find() slow down other parts of my app when resolver.ask() doesn't?",
                  ("resolver.md", RESOLVER))
    assert "in a blocking call" in quoted(text)[0], text  # the definition first, where the answer is
    assert "shared pool of helper threads, so a slow name server" in text


UNREF = """### `job.detach()`

To let the parent exit while a job runs on, call `job.detach()` on it.

```mjs
import { start } from 'node:jobs';
const job = start('report.js', { keep: true });
job.detach();
```

```cjs
const { start } = require('node:jobs');
const job = start('report.js', { keep: true });
job.detach();
```

```console
$ node parent.js && echo "parent gone"
```
"""


def test_an_example_repeated_in_another_module_syntax_is_quoted_once() -> None:
    text = answer("How do I let the parent exit while a job runs, with job.detach()?", ("jobs.md", UNREF))
    assert text.count("job.detach();") == 1, text  # the ES module version; the CommonJS twin is left out
    assert "import { start } from 'node:jobs';" in text and "require('node:jobs')" not in text
