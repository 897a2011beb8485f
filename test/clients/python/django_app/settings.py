"""The Django project of django_test.py: the shop app and cosid_django (its
fields, and inspectdb that knows them).  Host, port and user from PGHOST, PGPORT
and PGUSER, as libpq reads them."""
SECRET_KEY = "cosid-django-test"
INSTALLED_APPS = ["cosid_django", "shop"]
DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "cosid_django"}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
