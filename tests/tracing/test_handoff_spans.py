"""A handoff in a traced run: the handing agent's ``invoke_agent`` span ends without an
error and names the agent that answers next; the next span is that agent's."""

from __future__ import annotations

from opentelemetry.trace import StatusCode

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.handoffs import Handoffs
from skillkit.models import ToolCall
from skillkit.tracing import attributes as attr
from tests.tracing.conftest import Traces


async def test_a_handoff_names_the_next_agent_on_the_run_span(traces: Traces) -> None:
    billing = AgentRunner(
        AgentConfig(model="scripted", agent_id="billing"), adapter=ScriptedAdapter(["paid"])
    )
    triage = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage"),
        adapter=ScriptedAdapter(
            [Reply(tool_calls=[ToolCall(id="t", name="transfer_to_billing", arguments={})])]
        ),
        contributors=[Handoffs([billing])],
        tracer_provider=traces.provider,
    )
    assert (await triage.chat("pay")).text == "paid"
    handing = traces.one("invoke_agent triage")
    answering = traces.one("invoke_agent billing")
    assert handing.attributes is not None and answering.attributes is not None
    assert handing.attributes[attr.SKILLKIT_HANDOFF_TO_AGENT] == "billing"
    assert handing.attributes[attr.SKILLKIT_RUN_STOP_REASON] == "handoff"
    assert handing.status.status_code != StatusCode.ERROR
    assert answering.attributes[attr.GEN_AI_AGENT_NAME] == "billing"
    assert answering.attributes[attr.SKILLKIT_RUN_STOP_REASON] == "stop"
    assert len(traces.named("chat scripted")) == 2  # both agents' model calls
    assert traces.open_spans.open == {}
