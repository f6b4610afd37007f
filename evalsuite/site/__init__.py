"""The public evidence site: static pages of releases, scorecards and replayable traces, sanitized before shipping."""
