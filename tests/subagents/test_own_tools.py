"""Children with tools and a model of their own: the child gets tools the parent lacks
(objects from code, or names from the children's registry), and the parent's model is
never offered them."""

from __future__ import annotations

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.registry import AdapterRegistry
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import LLMRequest, ToolResultMessage
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents
from tests.subagents.conftest import conversations, task_call


@tool
def query_db(sql: str) -> str:
    """Run a read-only SQL query."""
    return f"3 rows for {sql}"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def registry(*definitions: AgentDefinition) -> AgentRegistry:
    found = AgentRegistry(default_sources=False)
    for definition in definitions:
        found.register(definition)
    return found


def offered(request: LLMRequest) -> list[str]:
    return [schema.name for schema in request.tools]


async def test_a_child_uses_a_tool_its_parent_does_not_have() -> None:
    analyst = AgentDefinition(name="analyst", description="Queries the database.", tools=[query_db])
    adapter = conversations(
        {
            "how many users?": [Reply(tool_calls=[task_call("analyst", "count users")]), "3"],
            "count users": [Reply(tool_calls=[("query_db", {"sql": "select *"})]), "three"],
        }
    )
    parent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=[lookup],
        contributors=[Subagents(registry(analyst))],
    )
    response = await parent.chat("how many users?")
    assert response.text == "3"
    assert parent.find_tool("query_db") is None
    parent_requests = [r for r in adapter.requests if r.messages[0].content == "how many users?"]  # type: ignore[union-attr]
    child_requests = [r for r in adapter.requests if r.messages[0].content == "count users"]  # type: ignore[union-attr]
    assert all("query_db" not in offered(r) for r in parent_requests)
    assert offered(child_requests[0]) == ["query_db"]
    task_result = next(m for m in response.messages if isinstance(m, ToolResultMessage))
    assert "three" in task_result.content[0].text  # type: ignore[union-attr]


async def test_names_come_from_the_parent_or_the_childrens_registry() -> None:
    analyst = AgentDefinition(name="analyst", description="Queries.", tools=("query_db", "lookup"))
    adapter = conversations(
        {
            "go": [Reply(tool_calls=[task_call("analyst", "work")]), "ok"],
            "work": [
                Reply(tool_calls=[("query_db", {"sql": "q"}), ("lookup", {"key": "k"})]),
                "done",
            ],
        }
    )
    parent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=[lookup],
        contributors=[Subagents(registry(analyst), tools=[query_db])],
    )
    await parent.chat("go")
    child = [r for r in adapter.requests if r.messages[0].content == "work"]  # type: ignore[union-attr]
    assert sorted(offered(child[0])) == ["lookup", "query_db"]
    assert parent.find_tool("query_db") is None


async def test_a_name_nobody_has_fails_the_child_at_once_with_the_names() -> None:
    broken = AgentDefinition(name="broken", description="Needs a missing tool.", tools=("nope",))
    adapter = conversations({"go": [Reply(tool_calls=[task_call("broken", "x")]), "ok"]})
    parent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        contributors=[Subagents(registry(broken))],
    )
    response = await parent.chat("go")
    result = next(m for m in response.messages if isinstance(m, ToolResultMessage))
    assert "nope" in result.content[0].text  # type: ignore[union-attr]
    assert len(adapter.requests) == 2  # the child never called the model


async def test_a_child_runs_on_its_own_model() -> None:
    child_model = ScriptedAdapter(
        [Reply(tool_calls=[("query_db", {"sql": "q"})]), "from the small model"]
    )
    adapters = AdapterRegistry()
    adapters.register("small", child_model)
    analyst = AgentDefinition(
        name="analyst", description="Queries.", tools=[query_db], model="small"
    )
    parent_model = ScriptedAdapter([Reply(tool_calls=[task_call("analyst", "work")]), "done"])
    parent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=parent_model,
        adapters=adapters,
        contributors=[Subagents(registry(analyst))],
    )
    response = await parent.chat("go")
    assert response.text == "done"
    assert len(child_model.requests) == 2
    assert all("query_db" not in offered(r) for r in parent_model.requests)


async def test_a_childs_spending_counts_against_the_parents_budget() -> None:
    from skillkit.models import TokenUsage

    heavy = TokenUsage(input=5000, output=100)
    child_model = ScriptedAdapter([Reply(text="found it", usage=heavy)])
    adapters = AdapterRegistry()
    adapters.register("small", child_model)
    analyst = AgentDefinition(name="analyst", description="Queries.", tools=[], model="small")
    parent_model = ScriptedAdapter(
        [
            Reply(tool_calls=[task_call("analyst", "work")], usage=TokenUsage(input=50, output=5)),
            "never asked",
        ]
    )
    parent = AgentRunner(
        AgentConfig(model="scripted", max_tokens=2000),
        adapter=parent_model,
        adapters=adapters,
        contributors=[Subagents(registry(analyst))],
    )
    response = await parent.chat("go")
    assert response.stop_reason == "budget"
    assert len(parent_model.requests) == 1
    assert isinstance(response.messages[-1], ToolResultMessage)  # the child's answer is kept
