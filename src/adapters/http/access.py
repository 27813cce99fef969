"""What the logged-in user may see and do in the console: the domain's Authorizer, asked as Kafka's APIs ask it.

The principal is `User:<name>` of the console's login and the host is the browser's address, so an
ACL means the same in the console as on a Kafka connection. Each page and action needs what the
Kafka API behind it needs: Metadata's DESCRIBE on a topic (the topic list is filtered by it),
DescribeConfigs' DESCRIBE_CONFIGS, Fetch's READ, CreateTopics' CREATE on the cluster or the topic,
DeleteTopics' DELETE, DescribeGroups' DESCRIBE on a group, OffsetCommit's READ on the group and on
each topic, and DESCRIBE_CONFIGS on the cluster for the broker's config. Super users are the
authorizer's business. Without an authorizer every logged-in user may do everything, as in Kafka.
"""

from __future__ import annotations

import attrs

from trafka.domain.security import KafkaPrincipal
from trafka.domain.security.acls import CLUSTER_NAME, AclOperation, Authorizer, ResourceType

from .pages import GroupRow


@attrs.frozen
class Access:
    principal: KafkaPrincipal | None  # None: the console is open (no security on the Kafka listeners)
    host: str
    authorizer: Authorizer | None = None

    @property
    def user(self) -> str | None:
        return None if self.principal is None else self.principal.name

    def allows(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        if self.authorizer is None or self.principal is None:
            return True
        return self.authorizer.authorize(self.principal, self.host, operation, resource_type, name)

    def describes_topic(self, name: str) -> bool:
        return self.allows(AclOperation.DESCRIBE, ResourceType.TOPIC, name)

    def may_create_topic(self, name: str) -> bool:
        return self.allows(AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME) or self.allows(
            AclOperation.CREATE, ResourceType.TOPIC, name
        )

    def may_reset(self, group_id: str, topics: set[str]) -> bool:
        """OffsetCommit's checks: READ on the group and on every topic whose offsets change."""
        return self.allows(AclOperation.READ, ResourceType.GROUP, group_id) and all(
            self.allows(AclOperation.READ, ResourceType.TOPIC, topic) for topic in sorted(topics)
        )

    def visible_group(self, row: GroupRow) -> GroupRow:
        """The group as DescribeGroups and OffsetFetch show it: topics the user may not describe left out."""
        lag = tuple(p for p in row.lag if self.describes_topic(p.tp.topic))
        share = tuple(p for p in row.share if self.describes_topic(p.tp.topic))
        members = tuple(
            attrs.evolve(m, assignment=tuple(tp for tp in m.assignment if self.describes_topic(tp.topic)))
            for m in row.members
        )
        return attrs.evolve(row, lag=lag, members=members, share=share)


OPEN = Access(None, "")
