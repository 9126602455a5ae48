from django.shortcuts import render


def home(request):
    return render(request, "configurator/home.html", {})
