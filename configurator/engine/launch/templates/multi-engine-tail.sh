# A node serves only while all of its engines run: the first engine to exit stops the others,
# and the script exits non-zero so a supervisor (systemd, Kubernetes, an operator) sees the failure.
status=0
wait -n || status=$?
echo "an engine on this node exited (status $status); stopping the others" >&2
stop_engines
wait || true
if [ "$status" -eq 0 ]; then status=1; fi
exit "$status"
