"""Sample documents the tests index: two product manuals and a Markdown guide with nested headings."""

MARKDOWN = b"""Intro line before any heading.

# Warranty guide

Everything about the warranty.

## Coverage

Parts and labour are covered for two years.

```
code block with # not a heading
```

## Claims

Send the receipt to claims@example.com.
"""

ROUTER = b"""# Nimbus Router Manual

## Installation

Place the Nimbus router near the centre of your home. Connect the grey WAN port to your fibre modem with the
supplied cable, then plug in the power adapter. The status light turns solid blue within two minutes.

## Resetting the password

To reset the admin password, hold the recessed reset button on the back for fifteen seconds with a paperclip.
The router restarts with the default password printed on the label underneath. Log in at 192.168.8.1 and
choose a new password of at least twelve characters.

## Warranty

The Nimbus router carries a warranty of three years from the date of purchase. Claims need the serial number
and the receipt. Damage from lightning strikes or water is not covered.
"""

KETTLE = b"""# Aurora Kettle Guide

## Descaling

Descale the Aurora kettle every four weeks in hard-water areas. Fill it with equal parts white vinegar and water,
boil once, leave it for an hour, then rinse three times.

## Warranty

The Aurora kettle has a warranty of two years. Keep the receipt; the heating element is covered but the glass
jug is not covered against breakage.
"""
