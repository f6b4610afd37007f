"""`evalsuite play`: staff attempt tasks on a local web page, each attempt a trial graded and stored like an agent's.

The person is an agent (evalsuite.trials.agents.human); this package is its web app: the routes and sign-in
(app), the tool forms (forms), the templates, and serving on loopback (serving).
"""
from evalsuite.trials.play.app import play_app
from evalsuite.trials.play.forms import FormField, form_arguments, form_fields
from evalsuite.trials.play.serving import loopback_socket, serve, serving, url_of

__all__ = ["FormField", "form_arguments", "form_fields", "loopback_socket", "play_app", "serve", "serving", "url_of"]
