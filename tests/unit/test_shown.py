"""How mcpio shows a URL (``mcpio._shown.shown``, the one rule; docs/guides/client.md "How mcpio
shows a URL"): without its userinfo, each credential-named parameter's value redacted, the name
matched as the server decodes it, and every other character as given."""

from __future__ import annotations

import pytest

from mcpio._shown import shown


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://x/?%61pi_key=k1", "https://x/?%61pi_key=[redacted]"),  # %61 is "a": api_key
        ("https://x/?%74oken=k1&a=1", "https://x/?%74oken=[redacted]&a=1"),
        ("https://x/?to%6Ben=k1", "https://x/?to%6Ben=[redacted]"),
        ("https://x/?api%5Fkey=k1", "https://x/?api%5Fkey=[redacted]"),  # %5F is "_"
        ("https://x/?access+token=k1", "https://x/?access+token=[redacted]"),  # "+" is a space
        ("https://x/?%53IG=k1", "https://x/?%53IG=[redacted]"),  # any case
        ("https://x/?%2574oken=k1", "https://x/?%2574oken=k1"),  # decoded once: "%74oken", no credential's name
        ("https://x/#%61ccess_token=k1", "https://x/#%61ccess_token=[redacted]"),
    ],
)
def test_a_parameter_name_is_matched_as_the_server_decodes_it(given: str, expected: str) -> None:
    assert shown(given) == expected


def test_each_of_a_repeated_parameter_is_redacted_and_an_empty_name_is_no_credential() -> None:
    assert shown("https://x/?token=a&q=1&token=b&token=&token") == (
        "https://x/?token=[redacted]&q=1&token=[redacted]&token=[redacted]&token"
    )
    assert shown("https://x/?=a&&=&token=b") == "https://x/?=a&&=&token=[redacted]"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            "HTTPS://u:p@Example.COM:8443/a//b;c?token=1&b=%41+#",
            "HTTPS://Example.COM:8443/a//b;c?token=[redacted]&b=%41+#",
        ),
        ("https://u:p@x/p?", "https://x/p?"),
        ("https://u:p@x/p#", "https://x/p#"),
        ("https://x/p?sig=1#", "https://x/p?sig=[redacted]#"),
        ("https://a@b:c@x?key=1", "https://x?key=[redacted]"),
        ("https://u:p@[::1/p?token=1", "https://[::1/p?token=[redacted]"),  # an invalid IPv6 literal
        ("//u:p@x/p", "//x/p"),
    ],
)
def test_the_text_shown_is_the_text_given_but_for_its_credentials(given: str, expected: str) -> None:
    assert shown(given) == expected


@pytest.mark.parametrize("text", ["python server.py", "C:\\srv//u@x", "server.py:app", "https://x/p?a=1&b#c"])
def test_a_text_with_nothing_to_hide_is_returned_as_it_is(text: str) -> None:
    assert shown(text) == text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("npx mcp-remote https://ada:pw@x/mcp", "npx mcp-remote https://x/mcp"),
        ("npx mcp-remote 'https://ada:pw@x/mcp' --flag", "npx mcp-remote 'https://x/mcp' --flag"),
        ('run "https://ada:pw@x/mcp"', 'run "https://x/mcp"'),
        ("run --url=https://ada:pw@x/mcp", "run --url=https://x/mcp"),
        ("a https://x/?q=1 https://ada:pw@y/", "a https://x/?q=1 https://y/"),
        ("https://x/?next=https://ada:pw@y/", "https://x/?next=https://y/"),
        ("mail ada@example.com", "mail ada@example.com"),
        ("cp a//b@c d", "cp a//b@c d"),
    ],
)
def test_each_url_of_a_command_line_loses_its_userinfo(given: str, expected: str) -> None:
    assert shown(given) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://x/mcp?a=1;token=s3", "https://x/mcp?a=1;token=[redacted]"),
        ("https://x/mcp?token=s3;a=1&b=2", "https://x/mcp?token=[redacted];a=1&b=2"),
        ("https://x/mcp?a=1;b=2", "https://x/mcp?a=1;b=2"),
    ],
)
def test_a_semicolon_separates_parameters_too(given: str, expected: str) -> None:
    """Some servers still split a query on ";" as on "&" (HTML 4.01 §B.2.2): a credential there
    is redacted, and the text keeps its separators."""
    assert shown(given) == expected
