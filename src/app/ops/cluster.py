"""`trafka cluster info`: the cluster id, the controller and the brokers, as Metadata and
DescribeCluster report them (the operator commands' client, ADR 101)."""

from __future__ import annotations

import argparse
from typing import Any

from .client import add_connection_options, admin_client, run_operator
from .output import OK, print_json, print_rows


def add_cluster_parser(commands: Any) -> None:
    cluster = commands.add_parser("cluster", help="what the cluster says about itself")
    verbs = cluster.add_subparsers(dest="verb", required=True)
    info = verbs.add_parser("info", help="cluster id, controller and brokers")
    add_connection_options(info)


def run_cluster(args: argparse.Namespace) -> int:
    return run_operator(_info, args)


def _info(args: argparse.Namespace) -> int:
    admin = admin_client(args)
    try:
        cluster = admin.describe_cluster()
        topics = admin.list_topics()
    finally:
        admin.close()
    brokers = [
        {
            "broker_id": b["broker_id"],
            "host": b["host"],
            "port": b["port"],
            "rack": b.get("rack"),
            "controller": b["broker_id"] == cluster["controller_id"],
        }
        for b in sorted(cluster["brokers"], key=lambda b: b["broker_id"])
    ]
    if args.output == "json":
        print_json(
            {
                "cluster_id": cluster["cluster_id"],
                "controller_id": cluster["controller_id"],
                "brokers": brokers,
                "topics": len(topics),
            }
        )
        return OK
    print(f"Cluster: {cluster['cluster_id']}  Controller: {cluster['controller_id']}  Topics: {len(topics)}")
    print_rows(brokers, ["broker_id", "host", "port", "rack", "controller"], "table")
    return OK
