"""``{% constant %}``: a part of a participant page drawn once per server process for each language and
value of the variables it names, then repeated (docs/benchmarks.md#server-cpu-per-request).

    {% load fragments %}
    {% constant study.slug study.min_viewport_width %}...{% endconstant %}

The block may use only the variables it names (and constants): whatever else it read would be kept from
the first page that drew it. Never wrap anything per request or per participant (the CSRF token, ids,
progress). The language is always part of the key; with ``DEBUG`` on every page draws the block afresh,
so template edits show at once. A block keeps at most :data:`KEPT` drawings (then starts over).
"""

from __future__ import annotations

from django import template
from django.conf import settings
from django.template.base import FilterExpression, Node, NodeList, Parser, Token
from django.utils.translation import get_language

register = template.Library()

KEPT = 1_000


class ConstantNode(Node):
    def __init__(self, nodelist: NodeList, vary: list[FilterExpression]) -> None:
        self.nodelist = nodelist
        self.vary = vary
        self.drawn: dict[tuple, str] = {}  # per node: the cached template loader keeps a template's nodes for the process

    def render(self, context: template.Context) -> str:
        if settings.DEBUG:
            return self.nodelist.render(context)
        key = (get_language(), *[v.resolve(context) for v in self.vary])
        drawn = self.drawn.get(key)
        if drawn is None:
            if len(self.drawn) >= KEPT:
                self.drawn.clear()
            drawn = self.drawn[key] = self.nodelist.render(context)
        return drawn


@register.tag("constant")
def do_constant(parser: Parser, token: Token) -> ConstantNode:
    """``{% constant var ... %}...{% endconstant %}``: see the module's docstring."""
    vary = [parser.compile_filter(bit) for bit in token.split_contents()[1:]]
    nodelist = parser.parse(("endconstant",))
    parser.delete_first_token()
    return ConstantNode(nodelist, vary)
