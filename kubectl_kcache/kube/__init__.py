"""The only package that imports `kubernetes`: kubeconfig resolution, the client, lists, writes, watches."""
