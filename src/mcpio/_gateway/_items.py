"""The upstream's prompts, resources and templates as a proxy serves them: listed as the upstream
lists them, rendered and read by it (its tools: ``_forwarded``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .._content import for_era
from .._errors import ResourceNotFound
from .._naming import strip_uri
from .._server._resources import Prompt, Resource, not_found
from .._uritemplate import UriTemplate

if TYPE_CHECKING:
    from .._client._client import Client
    from .._server._context import Context
    from ._proxy import Upstream


class ForwardedPrompt(Prompt):
    """A prompt of the upstream: listed as it lists it, rendered by it."""

    upstream: Upstream
    upstream_name: str  # its name upstream (served under another when mounted: ``up__name``)
    arguments: list[dict[str, Any]]

    @classmethod
    def of(cls, upstream: Upstream, p: Any) -> ForwardedPrompt:
        made = cls.__new__(cls)
        made.upstream = upstream
        made.name, made.title, made.description = p["name"], p.get("title"), p.get("description")
        made.upstream_name = made.name
        made.icons, made.meta = p.get("icons"), p.get("_meta")
        made.arguments = list(p.get("arguments") or [])
        made.sig = None  # type: ignore[assignment]  # completion asks the upstream (the proxy's completer)
        return made

    async def render(self, arguments: Any, ctx: Context, rules: Any) -> dict[str, Any]:
        async def go(client: Client) -> dict[str, Any]:
            params: dict[str, Any] = {"name": self.upstream_name}
            if arguments is not None:
                params["arguments"] = arguments
            result = dict(await client.request("prompts/get", params))
            result.pop("_meta", None)
            result.pop("resultType", None)
            messages = result.get("messages")
            if rules is not None and not rules.resource_links and isinstance(messages, list):
                result["messages"] = [_for_era(m, rules) for m in messages]
            return result

        return cast("dict[str, Any]", await self.upstream.forward(ctx, go))


def _for_era(message: Any, rules: Any) -> Any:
    """A prompt message of the upstream's with its content in the shape the client's version has."""
    content = message.get("content") if isinstance(message, dict) else None
    return {**message, "content": for_era(content, rules)} if isinstance(content, dict) else message


class ForwardedResource(Resource):
    """A resource or template of the upstream: listed as it lists it, read from it."""

    upstream: Upstream

    @classmethod
    def of(cls, upstream: Upstream, r: Any, uri: str) -> ForwardedResource:
        made = cls.__new__(cls)
        made.upstream, made.uri, made.fn = upstream, uri, None  # type: ignore[assignment]
        made.template = UriTemplate(uri)
        made.name, made.title, made.description = r.get("name") or uri, r.get("title"), r.get("description")
        made.mime_type, made.size = r.get("mimeType"), r.get("size")
        made.annotations, made.icons, made.meta = r.get("annotations"), r.get("icons"), r.get("_meta")
        made.ttl_ms = made.cache_scope = None
        made.path_params = frozenset(made.template.variables)  # the upstream judges its own URIs
        made.sig = None  # type: ignore[assignment]
        return made

    @classmethod
    def unlisted(cls, upstream: Upstream, uri: str) -> ForwardedResource | None:
        """The upstream's resource ``uri``, which it does not list, read from it all the same (the
        spec does not promise a tool's resource links in ``resources/list``); None for a URI in
        a template's form."""
        try:
            made = cls.of(upstream, {}, uri)
        except ValueError:
            return None
        return None if made.is_template else made

    def match(self, uri: str) -> dict[str, Any] | None:
        if not self.is_template:
            return {} if uri == self.uri else None
        return self.template.match(uri, self.path_params)

    def upstream_uri(self, uri: str) -> str:
        """``uri`` as the upstream names it (mounted in a gateway: without the namespaces)."""
        for namespace in self.namespaces:
            uri = strip_uri(uri, namespace) or uri
        return uri

    async def subscribed(self, uri: str, on: bool) -> None:
        await self.upstream.watch(self.upstream_uri(uri), on)

    async def read(self, uri: str, kwargs: dict[str, Any], ctx: Context | None) -> list[dict[str, Any]]:
        upstream_uri = self.upstream_uri(uri)

        async def go(client: Client) -> list[dict[str, Any]]:
            result = await client.request("resources/read", {"uri": upstream_uri})
            contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
            return [{**c, "uri": uri} if c.get("uri") == upstream_uri else c for c in contents]

        try:
            return cast("list[dict[str, Any]]", await self.upstream.forward(ctx, go))
        except ResourceNotFound as exc:  # the upstream's: in the client's era, under the URI it read
            raise not_found(uri, exc, ctx) from None
