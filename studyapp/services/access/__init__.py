"""Access: who may do what, and how often (rate limits of newcomers and staff sign-in attempts)."""
