"""``mcpio tap|replay``: where the command's own words end and the server's command begins."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def split_passthrough(
    words: list[str], arguments: Callable[[argparse.ArgumentParser], None]
) -> tuple[list[str], list[str]]:
    """``mcpio tap|replay …``'s own words (``words[0]`` is the command's name, ``arguments``
    declares its options), and the server's command.

    The command starts after ``--``, or else at the first word that is neither one of the
    command's options (nor an option's value) nor one of its own positionals (``replay``'s
    FILE): ``mcpio tap -o t.jsonl python server.py --port 3`` runs ``python server.py --port 3``.
    Hosts that drop the first ``--`` of a server's arguments (Gemini CLI's ``mcp add``) thus
    still start the right command. An unknown option before the command is a usage error."""
    if "--" in words:
        cut = words.index("--")
        return words[:cut], words[cut + 1 :]
    sub = argparse.ArgumentParser(prog=f"mcpio {words[0]}", add_help=False)
    arguments(sub)
    options = sub._option_string_actions  # the command's own flags (and whether they take a value)
    positionals = sum(1 for a in sub._actions if not a.option_strings)
    i = 1
    while i < len(words):
        word = words[i]
        if word.startswith("-") and len(word) > 1:
            action = options.get(word.split("=", 1)[0])
            if action is None:  # a server's command does not start with an option: a typo of ours
                sub.error(f"unrecognized option {word} (the server's command goes after the options)")
            i += 1 if ("=" in word or action.nargs == 0) else 2
        elif positionals > 0:
            positionals -= 1
            i += 1
        else:
            break
    return words[:i], words[i:]
