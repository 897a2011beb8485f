from django.db import models

import cosid_django


class Order(models.Model):
    id = cosid_django.CosidIdField(primary_key=True, generator="order")
    ref = cosid_django.UlidField(unique=True, db_default="gen_ulid_monotonic()")
    uid = cosid_django.DefaultUUIDField(unique=True, db_default="gen_uuidv7()")
    item = models.TextField()


class Line(models.Model):
    id = cosid_django.CosidIdField(primary_key=True, generator="line")
    order = models.ForeignKey(Order, models.CASCADE, related_name="lines")
    qty = models.IntegerField()
