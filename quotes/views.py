from django.shortcuts import render


def quote_list(request):
    return render(request, "quotes/list.html", {})
