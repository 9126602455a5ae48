# Refuse to start while a site value is still a placeholder.
placeholder_pattern='_''_[A-Z0-9][A-Z0-9_]*_''_'
left=$(grep -oE "$placeholder_pattern" "${BASH_SOURCE[0]}" | sort -u | tr '\n' ' ' || true)
if [ -n "$left" ]; then
  echo "refusing to start: replace the placeholder(s) ${left}in ${BASH_SOURCE[0]} with this site's values" >&2
  exit 2
fi
