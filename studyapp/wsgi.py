import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")
application = get_wsgi_application()

# A serving process loads what an annotator's item page needs before its first request: the page checks result links
# with evaluation.io.documents.url_problem, whose package loads pandas, numpy and scipy (about 1.6 s of CPU). Loaded
# here, gunicorn (and runserver) pay it at start, and with --preload once in the master before the workers fork, so no
# annotator waits for it; manage.py commands and other processes still start without it
# (docs/contributing.md#lazy-evaluation-imports).
import evaluation.io.documents  # noqa: E402, F401
