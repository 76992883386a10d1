"""The shared corpus's files (``../shared/corpus``), each with the kind it is: the list the
loaders' and the metrics' corpus tests go through."""

from __future__ import annotations

from platform_eval.formats import Kind

KINDS = {
    "adk/GoogleCloudPlatform__agent-starter-pack__agent_starter_pack__agents__adk__tests__eval__eval_config.json": Kind.EVAL_CONFIG,
    "adk/GoogleCloudPlatform__agent-starter-pack__agent_starter_pack__agents__adk__tests__eval__evalsets__basic.evalset.json": Kind.EVAL_SET,
    "adk/LiuYuWei__google_adk_evaluation_example__weather_agent__test_config.json": Kind.EVAL_CONFIG,
    "adk/LiuYuWei__google_adk_evaluation_example__weather_agent__weather_evaluation_zhtw.evalset.json": Kind.EVAL_SET,
    "adk/ayushworks__adk-eval-workshop__eval__trajectory.evalset.json": Kind.EVAL_SET,
    "adk/ayushworks__adk-eval-workshop__exercises__02_judge__judge.evalset.json": Kind.EVAL_SET,
    "adk/ayushworks__adk-eval-workshop__exercises__02_judge__test_config.json": Kind.EVAL_CONFIG,
    "adk/ayushworks__adk-eval-workshop__refund_agent__refund_order.evalset.json": Kind.EVAL_SET,
    "adk/google__adk-python__contributing__samples__live__live_non_blocking_tool_agent__live_non_blocking_tool_agent.evalset.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__context_update_test__successful_test.session.json": Kind.SESSION,
    "adk/google__adk-python__tests__integration__fixture__conversation_scenario__conversation_scenario.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__conversation_scenario__test_config.json": Kind.EVAL_CONFIG,
    "adk/google__adk-python__tests__integration__fixture__ecommerce_customer_service_agent__order_query.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__elicitation_agent__elicitation_flow.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__flow_complex_spark__sample.session.json": Kind.SESSION,
    "adk/google__adk-python__tests__integration__fixture__hello_world_agent__roll_die.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__hello_world_agent__test_config.json": Kind.EVAL_CONFIG,
    "adk/google__adk-python__tests__integration__fixture__home_automation_agent__test_config.json": Kind.EVAL_CONFIG,
    "adk/google__adk-python__tests__integration__fixture__home_automation_agent__test_files__dependent_tool_calls.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__home_automation_agent__test_files__memorizing_past_events__eval_data.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__home_automation_agent__test_files__simple_multi_turn_conversation.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__trip_planner_agent__initial.session.json": Kind.SESSION,
    "adk/google__adk-python__tests__integration__fixture__trip_planner_agent__test_files__trip_inquiry_sub_agent.test.json": Kind.EVAL_SET,
    "adk/google__adk-python__tests__integration__fixture__trip_planner_agent__trip_inquiry.test.json": Kind.LEGACY_TEST,
    "adk/google__adk-samples__contrib__python__crypto-payroll-agent__eval__crypto_payroll_eval_set.evalset.json": Kind.EVAL_SET,
    "adk/google__adk-samples__core__python__long-horizon-harness__tests__eval__evalsets__output_style.evalset.json": Kind.EVAL_SET,
    "adk/google__adk-samples__python__agents__RAG__eval__data__conversation.test.json": Kind.LEGACY_TEST,
    "adk/google__adk-samples__python__agents__brand-search-optimization__eval__data__eval_data1.evalset.json": Kind.LEGACY_EVAL_SET,
    "adk/google__adk-samples__python__agents__customer-service__eval__eval_data__full_conversation.test.json": Kind.LEGACY_TEST,
    "adk/google__adk-samples__python__agents__customer-service__eval__eval_data__test_config.json": Kind.EVAL_CONFIG,
    "adk/google__adk-samples__python__agents__customer-service__eval__sessions__123.session.json": Kind.SESSION,
    "adk/google__adk-samples__python__agents__data-science__eval__eval_data__simple.test.json": Kind.LEGACY_TEST,
    "adk/google__adk-samples__python__agents__personalized-shopping__tests__example_interactions__text_search_floral_dress.session.json": Kind.SESSION,
    "adk/google__adk-samples__python__agents__travel-concierge__eval__data__pretrip.test.json": Kind.EVAL_SET,
    "adk/jcarah__accelerate_context_engineering_workshop__customer-service__eval__scenarios__conversation_scenarios.json": Kind.CONVERSATION_SCENARIOS,
    "adk/jcarah__accelerate_context_engineering_workshop__customer-service__eval__scenarios__session_input.json": Kind.SESSION_INPUT,
    "adk/jcarah__accelerate_context_engineering_workshop__evaluation__evaluation__results__session_cs_simple_17a89ba6_session_1dfda3d3-9dcc-4353-9427-200df0386598.json": Kind.SESSION,
    "adk/pyljain__adk-evals__agent__.adk__eval_history__agent_greeting_local_evalset_1781945532.841373.evalset_result.json": Kind.EVAL_SET_RESULT,
    "adk/pyljain__adk-evals__agent__greeting.evalset.json": Kind.EVAL_SET,
    "adk/pyljain__adk-evals__agent__local_eval_config.json": Kind.EVAL_CONFIG,
    "agentevals/examples_dice_agent_eval_set.json": Kind.EVAL_SET,
    "agentevals/examples_langchain_agent_eval_set.json": Kind.EVAL_SET,
    "agentevals/examples_strands_agent_eval_set.json": Kind.EVAL_SET,
    "agentevals/samples_eval_set_helm.json": Kind.EVAL_SET,
    "agentevals/samples_evalset_helm_3_2026-02-23.json": Kind.EVAL_SET,
    "agentevals/samples_evalset_k8s_2026-02-20.json": Kind.EVAL_SET,
    "agentevals/samples_helm.json": Kind.JAEGER_TRACES,
    "agentevals/samples_helm_2.json": Kind.JAEGER_TRACES,
    "agentevals/samples_helm_3.json": Kind.JAEGER_TRACES,
    "agentevals/samples_k8s.json": Kind.JAEGER_TRACES,
    "agentevals/samples_tempo_export_with_batches.json": Kind.OTLP_TRACES,
    "agents-cli/basic-dataset.json": Kind.DATASET,
    "agents-cli/eval_config.yaml": Kind.EVAL_CONFIG,
}
EVAL_SET_KINDS = (Kind.EVAL_SET, Kind.LEGACY_TEST, Kind.LEGACY_EVAL_SET)
# Files named like eval sets that ADK itself rejects: they use `case_id` and `agent_content`.
NOT_ADK = {
    "agentevals/examples_dice_agent_eval_set.json",
    "agentevals/examples_langchain_agent_eval_set.json",
    "agentevals/examples_strands_agent_eval_set.json",
}

#: The eval sets ADK itself reads.
EVAL_SETS = [n for n, k in sorted(KINDS.items()) if k in EVAL_SET_KINDS and n not in NOT_ADK]
