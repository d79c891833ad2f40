"""The study platform: Django project package and its single app (healthchecks' ``hc/`` pattern)."""
