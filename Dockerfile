# One image for the web (gunicorn) and worker (celery) services.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_ENV=production
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-noto-cjk fonts-dejavu-core gettext curl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN python manage.py compilemessages -l zh_Hans \
 && SECRET_KEY=build ALLOWED_HOSTS=build DATABASE_URL=sqlite:////tmp/build.db CELERY_BROKER_URL=memory:// \
    python manage.py collectstatic --noinput
RUN useradd --create-home --uid 1000 app && mkdir -p /app/media && chown app /app/media
USER app
EXPOSE 8000
# Workers and threads from the cores the container may use (deploy/gunicorn.conf.py, README "Sizing the server").
CMD ["gunicorn", "config.wsgi:application", "-c", "deploy/gunicorn.conf.py"]
