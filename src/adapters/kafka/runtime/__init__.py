"""The broker's runtimes around the domain's services: what drives them from Trio and makes their
decisions durable (issue 40, item 8).

- `purgatory`: one way to wait (ADR 80); `unit_of_work`: one way to persist (ADR 79);
- `group_runtime`, `share_runtime`: the group coordinators' clocks, waiters and timers;
- `group_configs`: the GROUP config resource made durable; `topic_regexes`: KIP-848 regexes by RE2;
- `share_dead_letters`: the share groups' dead-letter copies (KIP-1191).
"""
