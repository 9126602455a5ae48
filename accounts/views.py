from django.contrib.auth import views as auth_views


class LoginView(auth_views.LoginView):
    """Django's log-in view with our template; redirects signed-in users home."""

    template_name = "registration/login.html"
    redirect_authenticated_user = True
