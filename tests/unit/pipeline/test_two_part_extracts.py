"""Offline extracts of questions in two parts, and of names written qualified: each part quoted, apart."""

from __future__ import annotations

from backend.pipeline.excerpts import segment
from backend.pipeline.extract_windows import Scorer
from tests.support.offline_answers import answer, quoted

COMMANDS = """Plugin Commands
---------------

A plugin can register commands on its own group. When the plugin is loaded,
its commands are available to the ``tool`` command. By default, those commands
are nested in a group named after the plugin.

.. code-block:: python

    plugin = Plugin('reports')

    @plugin.command('build')
    def build():
        ...

.. code-block:: text

    $ tool reports build

You can rename the group with the ``group`` argument. The following are
equivalent:

.. code-block:: python

    Plugin('reports', group='other')
    tool.load(plugin, group='other')

Weather stations report their readings every hour, whatever the plugin does.
The readings are kept for a month.

Passing ``group=None`` removes the nesting and puts the commands directly at
the top level:

.. code-block:: python

    Plugin('reports', group=None)
"""

LIFETIME = """Job Lifetime
------------

By default, a new worker object is created for every job. This means that it
is safe to keep state on the object between steps of one job.

However, if set-up is expensive, doing it for every job is wasteful. To avoid
this, set ``Worker.reuse_instance`` to ``True``, which will only create one
object and use it for every job. In this case, keeping state is not safe.

In the ``ReportWorker`` example, nothing keeps state, so it is cheaper to
reuse one object.

.. code-block:: python

    class ReportWorker(Worker):
        reuse_instance = True
"""


def test_the_second_part_of_a_question_is_quoted_apart_from_the_first() -> None:
    text = answer("How do I register commands on a plugin's group, and how do I put them at the top level instead?",
                  ("Plugins", COMMANDS))
    assert "> A plugin can register commands on its own group." in text
    assert "Passing `group=None` removes the nesting and puts the commands directly at the top level:" in text
    assert "Plugin('reports', group=None)" in text  # with the code it introduces
    assert "\n…\n> A plugin can register" in text  # shown apart (what lies between was left out), same heading
    assert "Weather stations" not in text  # nothing that adds no term of the question


def test_an_extract_never_ends_on_a_sentence_announcing_code_it_leaves_out() -> None:
    # The window and what follows it hold two code blocks; the third, announced by the last sentence, is over.
    text = answer("How do I register commands on a plugin's group?", ("Plugins", COMMANDS))
    assert "$ tool reports build" in text and "You can rename the group" in text
    assert quoted(text)[-1] == "You can rename the group with the `group` argument."


def test_a_name_asked_about_is_found_where_the_text_qualifies_it() -> None:
    text = answer("What happens if I set reuse_instance = True on a Worker class?", ("Workers", LIFETIME))
    assert "which will only create one object and use it for every job" in text


def test_a_qualified_name_is_an_exact_hit_and_a_number_is_not_found_inside_another() -> None:
    blocks = segment("Set ``Worker.reuse_instance`` to ``True``.\n\nVersion 11.2 removed the old flag.")
    scorer = Scorer("What does reuse_instance do since version 1.2?", blocks)
    assert scorer.covered(blocks[:1])[1]
    assert not scorer.covered(blocks[1:])[1]


SHIPPING = """Shipping the Project
--------------------

When you want to run the project on another machine, you build an *archive*
(``.tgz``) file. Install and use the ``bundle`` tool to do this.

.. code-block:: none

    $ pip install bundle
    $ python -m bundle --archive

Copy the file to the other machine and unpack it there.

Serving in Production
---------------------

The development server is not made for production. Instead, use a real
server. Install Porter in the environment and tell it to call the
application factory to get an application object.

.. code-block:: none

    $ porter-serve --call 'project:create_app'

Porter is only an example, chosen because it runs everywhere. There are many
more servers and deployment options that you may choose for your project.
"""


def test_a_second_passage_keeps_the_command_right_after_the_sentence_that_completes_it() -> None:
    text = answer("How do I build an archive of my project and then serve it in production with Porter?",
                  ("Deploy", SHIPPING))
    assert "porter-serve --call" in text
    assert "you build an *archive* (`.tgz`) file." in text
    assert "$ python -m bundle --archive" in text  # the command the completing sentence announces


TRUST = """Behind a Proxy
--------------

A reverse proxy forwards every external request to the local server, so the
application sees the proxy's address instead of the client's.

Proxies should set the forwarded headers to pass on the real values. The
application can then be told to trust and use those values by wrapping it
with the forwarding middleware, which rewrites the request environment.

This middleware should only be used if the application is actually behind a
proxy, and should be configured with the number of proxies chained in front
of it. Not all proxies set all the headers: some set only the address, others
only the scheme, and a load balancer in front of a cache may set them twice.
Count each hop between the client and the application, and check what each of
them sends before relying on it. Since incoming headers can be
faked, you must set how many proxies set each header so the middleware knows
what to trust.

.. code-block:: python

    app.wsgi_app = ForwardingMiddleware(app.wsgi_app, x_for=1, x_proto=1)

Only apply this middleware behind a proxy.
"""


def test_prose_that_stops_right_before_its_example_is_quoted_with_the_example() -> None:
    text = answer("How does the application learn the real client address behind a reverse proxy?",
                  ("Deploy", TRUST))
    assert "so the middleware knows what to trust." in text
    assert "ForwardingMiddleware(app.wsgi_app, x_for=1, x_proto=1)" in text
