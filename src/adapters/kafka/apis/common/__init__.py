"""What several rooms share (ADR 110): helpers, not rooms; `apis/` itself holds rooms only."""
