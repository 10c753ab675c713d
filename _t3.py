import runpy, time
t0=time.time()
ns = runpy.run_path("docs/tutorial/li2020_fedavg.py")
v = ns["verify"](ns["LI5"], ns["p"], ns["Behaviour"](ns["UniformArrivals"](4), local_steps=ns["ConstantSteps"](5)), rounds=100, x0=ns["x0"])
print(v.method, v.measured, v.theoretical, v.slack, v.passed, v.notes, v.negative_control, time.time()-t0)
print(ns["LI5"].algorithm({"mu":1,"gamma":8}))
